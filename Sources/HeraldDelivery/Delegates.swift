import Foundation

/// The app's renderer. The library decides what and when; the app draws, then reports back
/// (`DeliveryClient.impressionDetected(_:)`, `messageClicked(_:action:url:)`, `messageDismissed(_:type:)`,
/// `displayError(_:code:)`).
public protocol DeliveryDisplayDelegate: AnyObject, Sendable {
    /// Draw `message` now: its images are on disk (`InAppMessage.imageFile`).
    func display(_ message: InAppMessage)
    /// Take `message` off the screen without reporting anything: the app went to the background
    /// before its impression, and it waits on the stack again.
    func withdraw(_ message: InAppMessage)
    /// An event matched no campaign.
    func noMatchingTrigger(_ event: String)
    /// Asked just before `display(_:)`: show now, later (back on the stack) or never, e.g. while a
    /// keyboard is up or during checkout. The default is `.show`.
    func displayDecision(for message: InAppMessage) -> DisplayDecision
}

extension DeliveryDisplayDelegate {
    public func displayDecision(for message: InAppMessage) -> DisplayDecision { .show }
}

/// What the app hears about delivery itself, apart from rendering.
public protocol DeliveryDelegate: AnyObject, Sendable {
    /// The server refused the API key (401) or its scope (403): polling and uploads have stopped until
    /// the app gives a key again (`DeliveryClient.resume(apiKey:)`).
    func deliveryStopped(status: Int)
    /// Something could not be saved on the device. Frequency state (impressions, the last display) that
    /// is not saved is forgotten at the next restart, so a `once` campaign could show again.
    func deliveryStorageFailed(_ failure: StorageFailure)
}

/// A write to the client's storage folder that failed.
public struct StorageFailure: Error, Sendable, Equatable {
    /// What could not be saved.
    public enum Part: String, Sendable, Equatable {
        /// Impressions, the last display, the session, the data-collection choice.
        case state
        /// The last good feed.
        case feed
        /// The event queue.
        case events
        /// The image cache.
        case images
    }

    public let part: Part
    /// The underlying error, in words.
    public let reason: String

    public init(part: Part, reason: String) {
        self.part = part
        self.reason = reason
    }
}
