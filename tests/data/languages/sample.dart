import 'dart:async';

/// Counts events.
class Counter {
  int _count = 0;

  Counter(this._count);

  /// Adds one.
  @override
  void increment() {
    _count++;
  }

  int get count => _count;

  void reset() => _count = 0;
}

enum Color { red, green }

typedef Callback = void Function(int);

Future<void> main() async {
  final counter = Counter(0);
  counter.increment();
}
