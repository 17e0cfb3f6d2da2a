// Fuzz target "der": DER.parse on arbitrary bytes, then a full walk of the accepted tree with
// every primitive decoder, plus the standalone entry points that take one DER element
// (DistinguishedName, SubjectPublicKeyInfo). See Fuzz/README.md.
import CertificateParsing

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDER(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    // Parsing a slice of a larger buffer must give the same verdict, offsets shifted by the
    // slice's start (the model keeps slices with their original indices).
    let padded = [0xAA, 0xAA, 0xAA] + bytes
    let direct = Result { () throws(DERError) in try DER.parse(bytes) }
    let sliced = Result { () throws(DERError) in try DER.parse(padded[3...]) }
    switch (direct, sliced) {
    case (.success(let root), .success(let shifted)):
        invariant(root.encodedBytes.count == bytes.count, "the root must span the whole input")
        invariant(shifted.offset == 3 && shifted.identifier == root.identifier, "slice parse differs")
        touch(root, validated: true)
    case (.failure(let error), .failure(let shiftedError)):
        sink(error.description)
        invariant(error.code == shiftedError.code, "slice parse fails differently: \(error) vs \(shiftedError)")
        invariant(error.offset >= 0 && error.offset <= bytes.count, "DERError offset \(error.offset) outside the input")
        invariant(shiftedError.offset == error.offset + 3, "slice error offset not shifted: \(error) vs \(shiftedError)")
    default:
        invariant(false, "DER.parse verdict depends on the slice start")
    }
    if let name = try? DistinguishedName(derEncoded: bytes) { touch(name) }
    if let spki = try? SubjectPublicKeyInfo(derEncoded: bytes) { touch(spki) }
    return 0
}
