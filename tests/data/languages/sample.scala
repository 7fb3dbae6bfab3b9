package shipyard.metrics

object Percentiles {
  /** Nearest-rank percentile. */
  def percentile(xs: Seq[Double], p: Double): Double = {
    val sorted = xs.sorted
    sorted(math.ceil(p * sorted.size).toInt - 1)
  }

  class Reservoir(size: Int) {
    def add(x: Double): Unit = {
      println(x)
    }
  }
}
