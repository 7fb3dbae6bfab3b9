use std::cmp::Ordering;

/// A semantic version.
#[derive(Debug, Clone)]
pub struct Version {
    major: u64,
    minor: u64,
}

impl Version {
    /// Parses "1.2".
    pub fn parse(text: &str) -> Option<Version> {
        let mut parts = text.split('.');
        Some(Version { major: parts.next()?.parse().ok()?, minor: parts.next()?.parse().ok()? })
    }

    pub fn bump(&mut self) {
        self.minor += 1;
    }
}

mod tests {
    fn roundtrip() {
        assert!(super::Version::parse("1.2").is_some());
    }
}
