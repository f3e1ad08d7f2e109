import S3BlobStore
import Testing

/// How objects are cut into parts within S3's limits (5 MiB minimum, 10,000 parts, 5 GiB a part).
@Suite struct MultipartPlanTests {
    @Test func twelveMebibytesInFiveMebibyteParts() throws {
        let plan = try S3MultipartPlan(length: 12 << 20, preferredPartSize: 5 << 20)
        #expect(plan.partCount == 3)
        #expect(plan.range(ofPart: 1) == (0, 5 << 20))
        #expect(plan.range(ofPart: 2) == (5 << 20, 5 << 20))
        #expect(plan.range(ofPart: 3) == (10 << 20, 2 << 20))
    }

    @Test func aPartIsNeverSmallerThanFiveMebibytes() throws {
        let plan = try S3MultipartPlan(length: 12 << 20, preferredPartSize: 1 << 20)
        #expect(plan.partSize == 5 << 20)
        #expect(plan.partCount == 3)
    }

    @Test func aHugeObjectGrowsThePartSizeToStayWithinTenThousandParts() throws {
        let length: Int64 = 1 << 40
        let plan = try S3MultipartPlan(length: length, preferredPartSize: 16 << 20)
        #expect(plan.partCount <= 10_000)
        #expect(plan.partSize == 105 << 20, "1 TiB / 10,000 rounded up to a whole MiB")
        let last = plan.range(ofPart: plan.partCount)
        #expect(last.offset + last.length == length)
        #expect(last.length > 0)
    }

    @Test func anEmptyObjectIsOneEmptyPart() throws {
        let plan = try S3MultipartPlan(length: 0, preferredPartSize: 16 << 20)
        #expect(plan.partCount == 1)
        #expect(plan.range(ofPart: 1) == (0, 0))
    }

    @Test func anObjectOverFiveTebibytesIsRefused() {
        #expect(throws: S3RequestError.self) { try S3MultipartPlan(length: (5 << 40) + 1, preferredPartSize: 16 << 20) }
    }
}
