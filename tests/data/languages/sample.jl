module Shapes

export area

abstract type Shape end

"""
    Circle(r)

A circle of radius `r`.
"""
struct Circle <: Shape
    r::Float64
end

# Area of a circle.
function area(c::Circle)
    return pi * c.r^2
end

perimeter(c::Circle) = 2pi * c.r

macro twice(ex)
    return :($(esc(ex)); $(esc(ex)))
end

end
