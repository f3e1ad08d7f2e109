import Foundation
import FoundationNetworking
internal import BlobSystem

/// The URLSession's delegate: hands each task's events to its ``HTTPSExchange``.
///
/// Called on the session's serial delegate queue; the table is also reached by the threads that
/// start and finish requests, hence the lock.
final class HTTPSSessionRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let exchanges = Locked<[Int: HTTPSExchange]>([:])

    func register(_ exchange: HTTPSExchange, for task: URLSessionTask) {
        exchanges.withLock { $0[task.taskIdentifier] = exchange }
    }

    func unregister(_ task: URLSessionTask) {
        _ = exchanges.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    }

    private func exchange(_ task: URLSessionTask) -> HTTPSExchange? {
        exchanges.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        if let response = response as? HTTPURLResponse { exchange(dataTask)?.received(response) }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        exchange(dataTask)?.received(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        exchange(task)?.progressed()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        exchange(task)?.completed(error)
        // A response the reader abandoned is gone from the table already; one read to its end
        // is unregistered by its reader.
    }

    /// Redirects are not followed: S3 answers a wrong region with a 301 the caller reports.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
