import S3BlobStore

/// How a blobd serving an S3 backend cleans up abandoned multipart uploads (docs/SCALE-OUT.md,
/// "Puts"): `--upload-sweep-age`, `--upload-sweep-period`.
package struct UploadSweepOptions: Sendable, Hashable {
    /// An unfinished upload initiated longer ago than this many seconds is aborted.
    package var ageSeconds: Int
    /// Seconds from the end of one sweep to the next; 0 turns the sweep off.
    package var periodSeconds: Int

    /// The defaults: ``S3StaleUploads/defaultAge`` (seven days), hourly.
    package init(
        ageSeconds: Int = Int(S3StaleUploads.defaultAge.components.seconds),
        periodSeconds: Int = Int(S3StaleUploadSweeper.Schedule.defaultPeriod.components.seconds)
    ) {
        self.ageSeconds = ageSeconds
        self.periodSeconds = periodSeconds
    }

    /// The sweep's schedule, or `nil` when it is off.
    package var schedule: S3StaleUploadSweeper.Schedule? {
        periodSeconds == 0 ? nil : S3StaleUploadSweeper.Schedule(age: .seconds(ageSeconds), period: .seconds(periodSeconds))
    }

    /// The longest age and period accepted: a year.
    static let maximumSeconds = 365 * 24 * 60 * 60

    /// The flags and their environment variables, for ``DaemonCommandLine/environmentVariables``.
    package static let environmentVariables: [(flag: String, variable: String)] = [
        ("--upload-sweep-age", "BLOBD_UPLOAD_SWEEP_AGE"), ("--upload-sweep-period", "BLOBD_UPLOAD_SWEEP_PERIOD"),
    ]

    /// The flags' lines of `blobd --help`.
    package static let usage = """
          --upload-sweep-age SECONDS
                              with s3://: abort the stores' unfinished multipart uploads initiated
                              longer ago than this, 1 to 31536000 (default 604800, seven days);
                              env BLOBD_UPLOAD_SWEEP_AGE
          --upload-sweep-period SECONDS
                              with s3://: look for them at start and then every SECONDS, 1 to
                              31536000 (default 3600), or 0 for never; env BLOBD_UPLOAD_SWEEP_PERIOD
        """

    /// Sets what `flag` (one of ``environmentVariables``) sets from `value`; returns what is wrong
    /// with the value, phrased to follow the flag's or the variable's name.
    package mutating func apply(_ flag: String, _ value: String?) -> String? {
        switch flag {
        case "--upload-sweep-age":
            guard let text = value, let seconds = Int(text), (1...Self.maximumSeconds).contains(seconds) else {
                return "must be a whole number of seconds from 1 to \(Self.maximumSeconds)"
            }
            ageSeconds = seconds
        case "--upload-sweep-period":
            guard let text = value, let seconds = Int(text), (0...Self.maximumSeconds).contains(seconds) else {
                return "must be a whole number of seconds from 0 (never) to \(Self.maximumSeconds)"
            }
            periodSeconds = seconds
        default:
            return "is not a setting"
        }
        return nil
    }
}
