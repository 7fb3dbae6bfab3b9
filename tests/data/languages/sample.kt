package dev.shipyard.sdk

/** Retries idempotent calls. */
class RetryInterceptor(private val attempts: Int) {
    fun backoffMillis(attempt: Int): Long {
        val base = 100L shl attempt
        return base + (base / 2)
    }

    companion object {
        fun create(): RetryInterceptor = RetryInterceptor(3)
    }
}

fun topLevel(x: Int): Int {
    return x * 2
}
