#import <Foundation/Foundation.h>

/// A queue of tasks.
@interface TaskQueue : NSObject
@property (nonatomic, strong) NSMutableArray *tasks;
- (void)addTask:(id)task withPriority:(int)priority;
@end

@implementation TaskQueue

// Adds a task at a priority.
- (void)addTask:(id)task withPriority:(int)priority {
    [self.tasks addObject:task];
}

+ (instancetype)sharedQueue {
    static TaskQueue *shared = nil;
    return shared;
}

@end

static int clamp(int value, int low, int high) {
    return value < low ? low : (value > high ? high : value);
}
