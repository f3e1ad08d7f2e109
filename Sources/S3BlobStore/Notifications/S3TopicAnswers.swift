/// Reads the topic calls' XML answers.
package enum S3TopicAnswers {
    /// The ARN in a CreateTopic answer (`<CreateTopicResponse><CreateTopicResult><TopicArn>`).
    package static func createdTopicARN(_ document: some Collection<UInt8>) throws(XMLReadError) -> String {
        let root = try XMLReader.read(document)
        guard let arn = root.child("CreateTopicResult")?.text(of: "TopicArn"), !arn.isEmpty else {
            throw XMLReadError(offset: 0, reason: "no <CreateTopicResult><TopicArn> in <\(root.name)>")
        }
        return arn
    }

    /// The ARNs in a ListTopics answer (`<ListTopicsResponse><ListTopicsResult><Topics><member><TopicArn>`).
    package static func topicARNs(_ document: some Collection<UInt8>) throws(XMLReadError) -> [String] {
        let root = try XMLReader.read(document)
        guard let topics = root.child("ListTopicsResult")?.child("Topics") else {
            throw XMLReadError(offset: 0, reason: "no <ListTopicsResult><Topics> in <\(root.name)>")
        }
        return topics.children("member").compactMap { $0.text(of: "TopicArn") }
    }
}
