require "erb"

module Notifier
  # Renders templates.
  class TemplateSet
    def initialize(dir)
      @dir = dir
    end

    # Fills in placeholders.
    def interpolate(text, vars)
      text.gsub(/\{\{(\w+)\}\}/) { vars.fetch(Regexp.last_match(1)) }
    end

    def self.load(dir)
      new(dir)
    end
  end
end
