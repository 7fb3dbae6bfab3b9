package dev.shipyard;

import java.util.List;

/** Pages through results. */
public class PageIterator {
    private int page = 0;

    /** Loads the next page. */
    public List<String> loadNext() {
        page += 1;
        return List.of("page" + page);
    }

    static class Cursor {
        String token;

        String advance() {
            return token;
        }
    }
}
