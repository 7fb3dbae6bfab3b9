defmodule Shipyard.Router do
  @moduledoc "Routes requests to handlers."

  alias Shipyard.Conn

  @doc "Dispatches a connection."
  @spec call(Conn.t(), list) :: Conn.t()
  def call(%Conn{path: "/"} = conn, _), do: conn
  def call(conn, opts) when is_list(opts), do: conn

  defp normalize(path), do: String.trim(path, "/")

  defmacro __using__(_opts) do
    quote do
      def routes, do: []
    end
  end
end

defimpl String.Chars, for: Shipyard.Router do
  def to_string(_router), do: "router"
end
