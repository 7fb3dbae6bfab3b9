"""Token storage."""
import time

TTL = 3600


@dataclass
class TokenStore:
    """Keeps issued tokens."""

    ttl: int = TTL

    # Refresh keeps the family id.
    @retry(3)
    def refresh(self, token):
        """Exchange a refresh token."""
        new = self.issue(token.subject)
        return new

    def revoke(self, token):
        token.revoked = True
        return token


def helper(value):
    return value * 2
