(** Fixed-size buffers. *)

type t

(** Writes one byte, wrapping at the end. *)
val write : t -> char -> unit

val capacity : t -> int

module type SINK = sig
  val flush : t -> unit
end
