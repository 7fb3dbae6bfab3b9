library(stats)

#' Scales a vector to [0, 1].
#' @param x numbers
scale01 <- function(x) {
  span <- max(x) - min(x)
  (x - min(x)) / span
}

threshold <- 0.5

# Keeps values above the threshold.
keep_high = function(x, cut = threshold) {
  x[x > cut]
}
