const std = @import("std");

/// A point on the grid.
pub const Point = struct {
    x: i32,
    y: i32,

    /// Adds two points.
    pub fn add(self: Point, other: Point) Point {
        return .{ .x = self.x + other.x, .y = self.y + other.y };
    }

    pub fn isOrigin(self: Point) bool {
        return self.x == 0 and self.y == 0;
    }
};

pub const ParseError = error{ Empty, Invalid };

extern fn write(fd: c_int) c_int;

// Parses "x,y".
pub fn parse(text: []const u8) ParseError!Point {
    if (text.len == 0) return error.Empty;
    return Point{ .x = 0, .y = 0 };
}
