#if canImport(Glibc)
    import Glibc
#endif

/// The Public Suffix List (publicsuffix.org), used to refuse wildcards over a public suffix
/// (CA/B BR §3.2.2.6: a wildcard whose FQDN portion is "registry-controlled" or a "public
/// suffix" must not be issued, so a client should not honour one: `*.co.uk`,
/// `*.s3.amazonaws.com`).
///
/// The list comes from the system's copy (Debian's `publicsuffix` package,
/// `/usr/share/publicsuffix/public_suffix_list.dat`), or the file named by
/// `SERVERTRUST_PUBLIC_SUFFIX_LIST`; both the ICANN and the PRIVATE sections are used. Without a
/// list, every single-label name counts as a public suffix, which still refuses `*.com`.
/// Rules in Unicode are held as A-labels, the form names are compared in.
struct PublicSuffixList: Sendable {
    private let exact: Set<String>
    private let wildcards: Set<String>
    private let exceptions: Set<String>
    let isLoaded: Bool

    static let shared: PublicSuffixList = {
        let path =
            getenv("SERVERTRUST_PUBLIC_SUFFIX_LIST").map { String(cString: $0) }
            ?? "/usr/share/publicsuffix/public_suffix_list.dat"
        return PublicSuffixList(path: path)
    }()

    /// `path` opened for reading when it is a regular file; `nil` otherwise.
    private static func openRegularFile(_ path: String) -> UnsafeMutablePointer<FILE>? {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, let file = fdopen(descriptor, "r") else {
            close(descriptor)
            return nil
        }
        return file
    }

    init(path: String) {
        var exact = Set<String>()
        var wildcards = Set<String>()
        var exceptions = Set<String>()
        var loaded = false
        // O_NONBLOCK and a regular-file check: a FIFO named by SERVERTRUST_PUBLIC_SUFFIX_LIST would
        // otherwise wait for a writer, forever, the first time a name is checked (POSIX open()).
        if let file = Self.openRegularFile(path) {
            defer { fclose(file) }
            var line: UnsafeMutablePointer<CChar>?
            var capacity = 0
            while getline(&line, &capacity, file) > 0, let line {
                var rule = String(cString: line)
                // A rule ends at the first whitespace; comments start with "//".
                if let end = rule.firstIndex(where: { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }) {
                    rule = String(rule[..<end])
                }
                if rule.isEmpty || rule.hasPrefix("//") { continue }
                rule = rule.lowercased()
                // Internationalised rules are written as U-labels (`公司.cn`), names are
                // compared as A-labels (`xn--55qx5d.cn`, ``DNSName``): without this a
                // wildcard over such a suffix passed (`*.xn--55qx5d.cn`).
                guard let converted = Self.aLabels(rule) else { continue }
                rule = converted
                if rule.hasPrefix("!") {
                    exceptions.insert(String(rule.dropFirst()))
                } else if rule.hasPrefix("*.") {
                    wildcards.insert(String(rule.dropFirst(2)))
                } else {
                    exact.insert(rule)
                }
                loaded = true
            }
            free(line)
        }
        self.exact = exact
        self.wildcards = wildcards
        self.exceptions = exceptions
        self.isLoaded = loaded
    }

    /// `rule` with each non-ASCII label as its A-label (RFC 5890 §2.3.2.1, Punycode RFC
    /// 3492), the `!` and `*.` markers kept; `nil` for a label that cannot be one (such a
    /// rule could never match a name).
    static func aLabels(_ rule: String) -> String? {
        guard rule.unicodeScalars.contains(where: { !$0.isASCII }) else { return rule }
        var marker = ""
        var body = Substring(rule)
        if body.hasPrefix("!") {
            marker = "!"
            body = body.dropFirst()
        }
        var labels: [String] = []
        for label in body.split(separator: ".", omittingEmptySubsequences: false) {
            guard let aLabel = Punycode.aLabel(label) else { return nil }
            labels.append(aLabel)
        }
        return marker + labels.joined(separator: ".")
    }

    /// Whether `name` (lowercase, no trailing dot) is itself a public suffix.
    func isPublicSuffix(_ name: DNSName) -> Bool {
        guard isLoaded else { return name.labelCount == 1 }
        let value = name.value
        if exceptions.contains(value) { return false }
        if exact.contains(value) { return true }
        if let parent = name.parent, wildcards.contains(parent.value) { return true }
        // The implicit "*" rule: an unlisted top-level label is a public suffix.
        return name.labelCount == 1
    }
}
