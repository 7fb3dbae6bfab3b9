-module(shipyard_queue).
-export([new/0, push/2]).

-record(queue, {items = [] :: list(), size = 0 :: non_neg_integer()}).

%% @doc An empty queue.
-spec new() -> #queue{}.
new() ->
    #queue{}.

%% @doc Appends an item.
-spec push(#queue{}, term()) -> #queue{}.
push(#queue{items = Items, size = Size} = Q, Item) when Size < 100 ->
    Q#queue{items = Items ++ [Item], size = Size + 1};
push(Q, _Item) ->
    Q.

-define(LIMIT, 100).
