<?php
namespace App\Hooks;

/** Receives webhooks. */
class Receiver
{
    private string $secret;

    /** Verifies the signature. */
    public function verify(string $body, string $signature): bool
    {
        $expected = hash_hmac('sha256', $body, $this->secret);
        return hash_equals($expected, $signature);
    }
}

function helper(): int
{
    return 1;
}
