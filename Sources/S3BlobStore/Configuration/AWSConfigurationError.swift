/// Why the S3 configuration could not be resolved. Each case names what is missing or wrong and
/// where it was looked for; none ever contains a secret.
public enum AWSConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No access key anywhere: the places looked in, each with what was found there.
    case missingCredentials(profile: String, lookedIn: [String])
    /// One half of a key pair without the other (`missing` names the absent setting).
    case partialCredentials(missing: String, source: String)
    /// `AWS_PROFILE` names a profile that neither file defines.
    case profileNotFound(profile: String, lookedIn: [String])
    /// A configuration file exists but could not be read.
    case unreadableFile(path: String, reason: String)
    /// A configuration file is not the INI the AWS tools read.
    case malformedFile(path: String, line: Int, reason: String)
    /// An endpoint URL that is not `http://` or `https://` `HOST[:PORT]`.
    case invalidEndpoint(value: String, source: String, reason: String)
    /// A setting with a value the AWS tools would refuse.
    case invalidSetting(name: String, value: String, source: String, reason: String)

    /// One sentence for a person: what, where, and what to do.
    public var description: String {
        switch self {
        case .missingCredentials(let profile, let lookedIn):
            "no AWS credentials for profile '\(profile)': looked in \(lookedIn.joined(separator: "; ")). "
                + "Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or aws_access_key_id and aws_secret_access_key in the profile"
        case .partialCredentials(let missing, let source):
            "incomplete AWS credentials in \(source): \(missing) is missing"
        case .profileNotFound(let profile, let lookedIn):
            "the AWS profile '\(profile)' (AWS_PROFILE) is not defined: looked in \(lookedIn.joined(separator: "; "))"
        case .unreadableFile(let path, let reason):
            "cannot read the AWS configuration file \(path): \(reason)"
        case .malformedFile(let path, let line, let reason):
            "the AWS configuration file \(path) is malformed at line \(line): \(reason)"
        case .invalidEndpoint(let value, let source, let reason):
            "invalid S3 endpoint '\(value)' from \(source): \(reason)"
        case .invalidSetting(let name, let value, let source, let reason):
            "invalid \(name) '\(value)' from \(source): \(reason)"
        }
    }
}
