extension ContinuousClock.Instant {
    /// The time from this instant to now.
    package var elapsed: Duration { ContinuousClock.now - self }
}
