import CodexCore
import CodexTestSupport
import Foundation
import Testing

/// Image bytes judged by themselves: complete images of every accepted type pass, anything cut short or
/// not an image does not.
@Suite struct AgentImageAttachmentCompletenessTests {
    @Test(arguments: [
        (TestImages.png, "image/png"), (TestImages.jpeg, "image/jpeg"), (TestImages.gif, "image/gif"),
        (TestImages.webp, "image/webp"), (TestImages.heic, "image/heic"), (TestImages.heif, "image/heif"),
    ])
    func completeImagesAreRecognisedByTheirBytes(data: Data, mimeType: String) {
        #expect(AgentImageAttachment.completeImageMimeType(data) == mimeType)
    }

    @Test(arguments: [TestImages.png, TestImages.jpeg, TestImages.gif, TestImages.webp, TestImages.heic, TestImages.heif])
    func everyTruncationIsRefused(data: Data) {
        for length in 0..<data.count {
            #expect(AgentImageAttachment.completeImageMimeType(data.prefix(length)) == nil, "refused at \(length) of \(data.count) bytes")
        }
    }

    @Test func htmlAndTextAreNotImages() {
        #expect(AgentImageAttachment.completeImageMimeType(Data("<!doctype html><html><body>404</body></html>".utf8)) == nil)
        #expect(AgentImageAttachment.completeImageMimeType(Data()) == nil)
        #expect(AgentImageAttachment.completeImageMimeType(Data("GIF89a".utf8)) == nil)
    }

    @Test func aPNGWhoseChunkLengthPointsPastTheEndIsRefused() {
        var bytes = [UInt8](TestImages.png)
        bytes[8...11] = [0x7F, 0xFF, 0xFF, 0xFF]
        #expect(AgentImageAttachment.completeImageMimeType(Data(bytes)) == nil)
    }
}
