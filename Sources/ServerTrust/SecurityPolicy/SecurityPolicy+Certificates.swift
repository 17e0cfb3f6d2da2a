public import CertificateParsing
import Foundation
import TrustEvaluation

extension SecurityPolicy {
    /// The file extensions loaded by ``certificates(inDirectory:)``, compared
    /// case-insensitively (Alamofire's list, plus PEM).
    public static let certificateFileExtensions: Set<String> = ["cer", "crt", "der", "pem"]

    /// Loads every `.cer`, `.crt`, `.der` and `.pem` file of a directory (not recursively),
    /// in file-name order (`+certificatesInBundle:`).
    ///
    /// A file with one of those extensions that does not hold certificates is an error naming
    /// it: AFNetworking crashes later on such data in certificate mode (AF #3768, #3781, #3608)
    /// and Alamofire silently drops it (Alamofire #3363). A PEM file may hold several
    /// certificates; all are loaded.
    /// - Parameter directory: The directory.
    /// - Returns: The certificates.
    /// - Throws: ``PolicyConfigurationError`` (`unreadable` or `notACertificate`) with the
    ///   file's path.
    public static func certificates(inDirectory directory: String) throws(PolicyConfigurationError) -> [Certificate] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw PolicyConfigurationError(.unreadable, path: directory, "cannot list the directory: \(error.localizedDescription)")
        }
        var certificates: [Certificate] = []
        for name in names.sorted() {
            guard let dot = name.lastIndex(of: "."),
                certificateFileExtensions.contains(name[name.index(after: dot)...].lowercased())
            else { continue }
            certificates += try loadCertificates(atPath: directory + "/" + name)
        }
        return certificates
    }

    /// Loads the certificates of one PEM or DER file.
    ///
    /// A pinned-certificate file is local input the app ships and trusts, so it is read with
    /// ``/CertificateParsing/Certificate/ParsingTolerance/signatureAlgorithmParameterEncoding``:
    /// AFNetworking's and Alamofire's test certificates, which apps copied as their pins, write
    /// one of their two signatureAlgorithm fields without the NULL parameters, which
    /// `SecCertificateCreateWithData` accepts. Such a certificate loads, and says so in its
    /// ``/CertificateParsing/Certificate/toleratedDeviations``. The same certificate served in a
    /// handshake is still refused as malformed: only what the app itself supplies is read so.
    /// - Parameter path: The file.
    /// - Returns: Its certificates (at least one).
    /// - Throws: ``PolicyConfigurationError`` (`unreadable` or `notACertificate`) naming it.
    public static func loadCertificates(atPath path: String) throws(PolicyConfigurationError) -> [Certificate] {
        let data: [UInt8]
        do { data = try TrustStore.readFile(path) } catch {
            throw PolicyConfigurationError(.unreadable, path: path, "cannot read the file: \(error.reason)")
        }
        do {
            return try Certificate.load(data, tolerating: .signatureAlgorithmParameterEncoding)
        } catch {
            throw PolicyConfigurationError(.notACertificate, path: path, "not a certificate (PEM or DER): \(error)")
        }
    }
}
