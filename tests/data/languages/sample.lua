local M = {}

--- Renders a template.
function M.render(template, vars)
  return (template:gsub("{{(%w+)}}", vars))
end

local function trim(s)
  return s:match("^%s*(.-)%s*$")
end

function M:choose(options)
  return options[1]
end

return M
