/// Everything the S3 backend needs to reach a bucket's endpoint and sign for it, resolved the way
/// the AWS CLI resolves it (docs/SCALE-OUT.md, "Configuration"):
///
/// - profile: `AWS_PROFILE`, else `default`;
/// - credentials: `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`), else the
///   profile's `aws_access_key_id`/`aws_secret_access_key`/`aws_session_token` in the shared
///   credentials file, else in the config file;
/// - region: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region`, else `us-east-1`;
/// - endpoint: `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's `services` section's
///   `s3 = endpoint_url`, the profile's `endpoint_url`, else AWS's regional endpoint (none of the
///   configured ones when `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is true);
/// - addressing: the profile's `s3 = addressing_style`, else path style for a configured endpoint
///   and virtual-hosted style for AWS.
public struct S3Configuration: Sendable, Hashable, CustomStringConvertible {
    /// The access key that signs.
    public var credentials: AWSCredentials
    /// The signing region.
    public var region: String
    /// Where requests go.
    public var endpoint: S3Endpoint
    /// How the bucket is named in requests.
    public var addressingStyle: S3AddressingStyle
    /// The profile whose settings were read.
    public var profile: String
    /// Where each value came from, for messages (`environment variable AWS_REGION`, a file and section).
    public var origins: Origins

    /// Where each resolved value came from.
    public struct Origins: Sendable, Hashable {
        /// Where the credentials were found.
        public var credentials: String
        /// Where the region was found.
        public var region: String
        /// Where the endpoint was found.
        public var endpoint: String

        /// Origins from their parts.
        public init(credentials: String, region: String, endpoint: String) {
            self.credentials = credentials
            self.region = region
            self.endpoint = endpoint
        }
    }

    /// A configuration from its parts.
    public init(
        credentials: AWSCredentials, region: String, endpoint: S3Endpoint, addressingStyle: S3AddressingStyle,
        profile: String = "default", origins: Origins? = nil
    ) {
        self.credentials = credentials
        self.region = region
        self.endpoint = endpoint
        self.addressingStyle = addressingStyle
        self.profile = profile
        self.origins = origins ?? Origins(credentials: "given", region: "given", endpoint: "given")
    }

    /// The endpoint, region, addressing, profile and access key ID, with where each came from; no secret.
    public var description: String {
        "S3 endpoint \(endpoint) (\(origins.endpoint)), region \(region) (\(origins.region)), \(addressingStyle.rawValue)-style addressing, "
            + "profile '\(profile)', access key \(credentials.accessKeyID) (\(origins.credentials))"
    }

    /// Resolves the configuration from `environment` (the process's by default).
    public static func resolve(environment: AWSEnvironment = .process) throws(AWSConfigurationError) -> S3Configuration {
        let files = try AWSProfileFiles.load(from: environment)
        let explicitProfile = environment.value("AWS_PROFILE")
        let profile = explicitProfile ?? "default"
        let credentialsSection = files.credentialsSection(profile)
        let configSection = files.configSection(profile)
        let credentialsFile = files.credentialsPath.map { "\($0) [\(profile)]" }
        let configFile = files.configPath.map { "\($0) [\(profile == "default" ? "default" : "profile \(profile)")]" }

        if explicitProfile != nil, credentialsSection == nil, configSection == nil {
            throw .profileNotFound(profile: profile, lookedIn: [
                files.credentialsPath.map { "\($0)\(files.credentials == nil ? " (no such file)" : "")" } ?? "no credentials file (HOME is not set)",
                files.configPath.map { "\($0)\(files.config == nil ? " (no such file)" : "")" } ?? "no config file (HOME is not set)",
            ])
        }

        // Credentials: the environment, then the credentials file, then the config file.
        var credentials: AWSCredentials?
        var credentialsOrigin = ""
        var lookedIn: [String] = []
        let keyID = environment.value("AWS_ACCESS_KEY_ID")
        let secret = environment.value("AWS_SECRET_ACCESS_KEY")
        switch (keyID, secret) {
        case let (keyID?, secret?):
            credentials = AWSCredentials(accessKeyID: keyID, secretAccessKey: secret, sessionToken: environment.value("AWS_SESSION_TOKEN"))
            credentialsOrigin = "environment variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
        case (_?, nil):
            throw .partialCredentials(missing: "AWS_SECRET_ACCESS_KEY", source: "the environment (AWS_ACCESS_KEY_ID is set)")
        case (nil, _?):
            throw .partialCredentials(missing: "AWS_ACCESS_KEY_ID", source: "the environment (AWS_SECRET_ACCESS_KEY is set)")
        case (nil, nil):
            lookedIn.append("environment variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (not set)")
        }
        for (section, place, file) in [
            (credentialsSection, credentialsFile, files.credentials), (configSection, configFile, files.config),
        ] where credentials == nil {
            guard let place else {
                lookedIn.append("no ~/.aws file (HOME is not set)")
                continue
            }
            guard file != nil else {
                lookedIn.append("\(place.prefix { $0 != " " }) (no such file)")
                continue
            }
            guard let section else {
                lookedIn.append("\(place) (no such section)")
                continue
            }
            switch (section["aws_access_key_id"].nonEmpty, section["aws_secret_access_key"].nonEmpty) {
            case let (keyID?, secret?):
                credentials = AWSCredentials(accessKeyID: keyID, secretAccessKey: secret, sessionToken: section["aws_session_token"].nonEmpty)
                credentialsOrigin = place
            case (_?, nil):
                throw .partialCredentials(missing: "aws_secret_access_key", source: place)
            case (nil, _?):
                throw .partialCredentials(missing: "aws_access_key_id", source: place)
            case (nil, nil):
                lookedIn.append("\(place) (no aws_access_key_id)")
            }
        }
        guard let credentials else { throw .missingCredentials(profile: profile, lookedIn: lookedIn) }

        // Region.
        let region: String
        let regionOrigin: String
        if let value = environment.value("AWS_REGION") {
            (region, regionOrigin) = (value, "environment variable AWS_REGION")
        } else if let value = environment.value("AWS_DEFAULT_REGION") {
            (region, regionOrigin) = (value, "environment variable AWS_DEFAULT_REGION")
        } else if let value = configSection?["region"].nonEmpty, let configFile {
            (region, regionOrigin) = (value, configFile)
        } else {
            (region, regionOrigin) = ("us-east-1", "the default")
        }
        guard region.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            throw .invalidSetting(name: "region", value: region, source: regionOrigin, reason: "a region is letters, digits and '-'")
        }

        // Endpoint.
        var endpointText: String?
        var endpointOrigin = "AWS's regional endpoint"
        let ignoreSetting = environment.value("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
            ?? configSection?["ignore_configured_endpoint_urls"].nonEmpty
        if !(ignoreSetting?.lowercased() == "true") {
            let servicesName = configSection?["services"].nonEmpty
            let servicesSection = servicesName.flatMap { files.servicesSection($0) }
            let candidates: [(String?, String)] = [
                (environment.value("AWS_ENDPOINT_URL_S3"), "environment variable AWS_ENDPOINT_URL_S3"),
                (environment.value("AWS_ENDPOINT_URL"), "environment variable AWS_ENDPOINT_URL"),
                (servicesSection?["s3.endpoint_url"].nonEmpty, "\(files.configPath ?? "config") [services \(servicesName ?? "")] s3.endpoint_url"),
                (configSection?["endpoint_url"].nonEmpty, "\(configFile ?? "config") endpoint_url"),
            ]
            if let found = candidates.first(where: { $0.0 != nil }) {
                endpointText = found.0
                endpointOrigin = found.1
            }
        }
        let endpoint = try endpointText.map { text throws(AWSConfigurationError) in try S3Endpoint(parsing: text, source: endpointOrigin) }
            ?? .aws(region: region)

        // Addressing.
        var addressing: S3AddressingStyle = endpointText == nil ? .virtualHosted : .path
        if let style = configSection?["s3.addressing_style"].nonEmpty {
            switch style.lowercased() {
            case "path": addressing = .path
            case "virtual": addressing = .virtualHosted
            case "auto": break
            default:
                throw .invalidSetting(
                    name: "s3.addressing_style", value: style, source: configFile ?? "config", reason: "expected path, virtual or auto"
                )
            }
        }

        return S3Configuration(
            credentials: credentials, region: region, endpoint: endpoint, addressingStyle: addressing, profile: profile,
            origins: Origins(credentials: credentialsOrigin, region: regionOrigin, endpoint: endpointOrigin)
        )
    }
}

extension Optional where Wrapped == String {
    /// The string unless it is `nil` or empty: an empty setting counts as unset, as in the AWS tools.
    fileprivate var nonEmpty: String? {
        guard let self, !self.isEmpty else { return nil }
        return self
    }
}
