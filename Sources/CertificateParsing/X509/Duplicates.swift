/// The index of the first element whose key an earlier element already has, or `nil`.
///
/// RFC 5280 forbids repeating an extension (§4.2, §5.2, §5.3) or a policy (§4.2.1.4). A
/// certificate carries a handful of either, where a linear scan is cheapest; a crafted one may
/// carry tens of thousands, where a scan of earlier elements would be quadratic, so beyond a
/// few elements a set is used.
func firstDuplicate<Element, Key: Hashable>(_ elements: [Element], key: (Element) -> Key) -> Int? {
    if elements.count <= 16 {
        for index in elements.indices {
            let k = key(elements[index])
            for earlier in elements[..<index] where key(earlier) == k { return index }
        }
        return nil
    }
    var seen = Set<Key>(minimumCapacity: elements.count)
    for (index, element) in elements.enumerated() where !seen.insert(key(element)).inserted { return index }
    return nil
}
