extension ArraySlice where Element == UInt8 {
    /// Whether `other` holds the same bytes: lengths first, then a plain loop over the raw
    /// buffers. Path building compares names, OIDs and key identifiers many times per chain,
    /// and `elementsEqual`'s generic iterators cost several times as much per byte.
    @inlinable
    package func bytesEqual(_ other: ArraySlice<UInt8>) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBufferPointer { lhs in
            other.withUnsafeBufferPointer { rhs in
                for i in 0..<lhs.count where lhs[i] != rhs[i] { return false }
                return true
            }
        }
    }
}
