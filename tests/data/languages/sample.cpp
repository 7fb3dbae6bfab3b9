#include <vector>

namespace shipyard {

class Pool {
 public:
  void submit(int task);
  int size() const { return static_cast<int>(tasks_.size()); }

 private:
  std::vector<int> tasks_;
};

// Queues a task.
void Pool::submit(int task) {
  tasks_.push_back(task);
}

template <typename T>
T clampTo(T value, T low, T high) {
  return value < low ? low : (value > high ? high : value);
}

}  // namespace shipyard
