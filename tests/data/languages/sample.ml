open Printf

(** Fixed-size buffers. *)
module Ring = struct
  type t = { data : bytes; mutable head : int }

  (** Writes one byte, wrapping at the end. *)
  let write ring byte =
    Bytes.set ring.data ring.head byte;
    ring.head <- (ring.head + 1) mod Bytes.length ring.data

  let capacity ring = Bytes.length ring.data
end

type color = Red | Green

let default_size = 64

let describe ring = sprintf "ring of %d" (Ring.capacity ring)
