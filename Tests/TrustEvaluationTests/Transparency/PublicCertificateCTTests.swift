import CertificateParsing
import ServerTrustLab
import Testing
import TrustEvaluation

// Embedded SCTs of a real public certificate, verified with the real public keys of the logs
// that issued them, and cross-checked with OpenSSL's SCT_validate: the verifier is checked
// against SCTs neither it nor the Lab produced.
//
// The certificate (wmkt1.cirrus.bloomberg.com, 2023-03-20 to 2024-03-03, from
// appmattus/certificatetransparency's test data) and its issuer (DigiCert TLS RSA SHA256 2020
// CA1) are public; the log keys are those of Chrome's public v3 log list for Google
// 'Argon2024', DigiCert 'Yeti2024' and Let's Encrypt 'Oak2024H1'. Both the certificates and the
// keys are public data; nothing here is secret or generated.

enum PublicCTFixture {
    static let leafPEM = """
        -----BEGIN CERTIFICATE-----
        MIIKgTCCCWmgAwIBAgIQDjD+dptusASscMFyPi8JADANBgkqhkiG9w0BAQsFADBP
        MQswCQYDVQQGEwJVUzEVMBMGA1UEChMMRGlnaUNlcnQgSW5jMSkwJwYDVQQDEyBE
        aWdpQ2VydCBUTFMgUlNBIFNIQTI1NiAyMDIwIENBMTAeFw0yMzAzMjAwMDAwMDBa
        Fw0yNDAzMDMyMzU5NTlaMG8xCzAJBgNVBAYTAlVTMREwDwYDVQQIEwhOZXcgWW9y
        azERMA8GA1UEBxMITmV3IFlvcmsxFTATBgNVBAoTDEJsb29tYmVyZyBMUDEjMCEG
        A1UEAxMad21rdDEuY2lycnVzLmJsb29tYmVyZy5jb20wggEiMA0GCSqGSIb3DQEB
        AQUAA4IBDwAwggEKAoIBAQCjeXMnmY4si879joLkFC+tpGgecYPDSyUL5hJ/Skl3
        C2aYfQfhil1s/h2zSHHx2JmNz/qqUxax9Hb8xi47t727ItioKSzvrBYQE1m0zau+
        owUr56vAekOMjL3j/NQlhf4sZnvcygknfNB1g0naQHhod2zsSk6qqgiPltWSbwD7
        8hzhKl4HuGQgco2sQOGjX5320HF+eHl0Ss/0z2ay1roVbwAk3UKqXx3AbCHq+hhI
        m9aoK3gMt9cGVcAkGCcNVveRCZNKC2CzTHNBYT8zOQN12LkwfmDhspRC4WrRZt77
        l6A3/aixhVCpev42nptx1I7zE8NB48Lzf2wophTupXu1AgMBAAGjggc3MIIHMzAf
        BgNVHSMEGDAWgBS3a6LqqKqEjHnqtNoPmLLFlXa59DAdBgNVHQ4EFgQUZf8WxwKG
        tSLb7KTM/QS8/cNzQqgwggPdBgNVHREEggPUMIID0IIad21rdDEuY2lycnVzLmJs
        b29tYmVyZy5jb22CE2Fib3V0LmJsb29tYmVyZy5jb22CHGFib3V0LmJsb29tYmVy
        Z2luc3RpdHV0ZS5jb22CGWIyMC1jYXJib24tZXhjZWxsZW5jZS5vcmeCDGJhdHNj
        b3JlLmNvbYIKYmJ0aGF0LmNvbYIVYmV0YS1lZS5ibG9vbWJlcmcuY29tggtiZ292
        MjAwLmNvbYISYmxvZy5ibG9vbWJlcmcuY29tghZibG9tYmVyZ2dvdmVybm1lbnQu
        Y29tgghibG9vbS5iZ4IMYmxvb21iZXJnLmNugg9ibG9vbWJlcmcuY28uanCCD2Js
        b29tYmVyZy5jby5rcoIPYmxvb21iZXJnLmNvLnVrgg1ibG9vbWJlcmcuY29tghBi
        bG9vbWJlcmcuY29tLmJyghBibG9vbWJlcmcuY29tLm14ghBibG9vbWJlcmcuY29t
        LnRyggxibG9vbWJlcmcuZGWCDGJsb29tYmVyZy5mcoIMYmxvb21iZXJnLmluggxi
        bG9vbWJlcmcuaXSCDWJsb29tYmVyZy5uZXSCDGJsb29tYmVyZy50doIWYmxvb21i
        ZXJnYWZmaWxpYXRlLmNvbYIQYmxvb21iZXJnYXBhLm5ldIIRYmxvb21iZXJnYXBh
        ZS5uZXSCEWJsb29tYmVyZ2FwcHMuY29tghVibG9vbWJlcmdhcmNhZGUuY28udWuC
        E2Jsb29tYmVyZ2FyY2FkZS5jb22CEGJsb29tYmVyZ2FybS5uZXSCEWJsb29tYmVy
        Z2JldGEuY29tghBibG9vbWJlcmdibmEuY29tghJibG9vbWJlcmdicmllZi5jb22C
        E2Jsb29tYmVyZ2JyaWVmcy5jb22CEWJsb29tYmVyZ2J0YnMuY29tghFibG9vbWJl
        cmdidGJzLm5ldIIQYmxvb21iZXJnYnRicy5zZ4ISYmxvb21iZXJnYnRic2cuY29t
        ghJibG9vbWJlcmdidGJzZy5uZXSCEWJsb29tYmVyZ2J0YnNnLnNnghVibG9vbWJl
        cmdidXNpbmVzcy5jb22CE2Jsb29tYmVyZ2NhcmVlci5jb22CEmJsb29tYmVyZ2No
        aW5hLmNvbYIQYmxvb21iZXJnY21zLmNvbYIUYmxvb21iZXJnY29tcGFueS5jb22C
        G2Jsb29tYmVyZ2NvbnRlbnRzZXJ2aWNlLmNvbYIUYmxvb21iZXJnY3VycmVudC5j
        b22CGWJsb29tYmVyZ2ZvcmVkdWNhdGlvbi5jb22CEGJsb29tYmVyZ2dvdi5jb20w
        DgYDVR0PAQH/BAQDAgWgMB0GA1UdJQQWMBQGCCsGAQUFBwMBBggrBgEFBQcDAjCB
        jwYDVR0fBIGHMIGEMECgPqA8hjpodHRwOi8vY3JsMy5kaWdpY2VydC5jb20vRGln
        aUNlcnRUTFNSU0FTSEEyNTYyMDIwQ0ExLTQuY3JsMECgPqA8hjpodHRwOi8vY3Js
        NC5kaWdpY2VydC5jb20vRGlnaUNlcnRUTFNSU0FTSEEyNTYyMDIwQ0ExLTQuY3Js
        MD4GA1UdIAQ3MDUwMwYGZ4EMAQICMCkwJwYIKwYBBQUHAgEWG2h0dHA6Ly93d3cu
        ZGlnaWNlcnQuY29tL0NQUzB/BggrBgEFBQcBAQRzMHEwJAYIKwYBBQUHMAGGGGh0
        dHA6Ly9vY3NwLmRpZ2ljZXJ0LmNvbTBJBggrBgEFBQcwAoY9aHR0cDovL2NhY2Vy
        dHMuZGlnaWNlcnQuY29tL0RpZ2lDZXJ0VExTUlNBU0hBMjU2MjAyMENBMS0xLmNy
        dDAJBgNVHRMEAjAAMIIBgQYKKwYBBAHWeQIEAgSCAXEEggFtAWsAdwDuzdBk1dsa
        zsVct520zROiModGfLzs3sNRSFlGcR+1mwAAAYcADohzAAAEAwBIMEYCIQD020JU
        Oa5BkNQePX7HerZGNSt0orik0bJBjiioqn5kGwIhAIHgcXWSqumEMv7n4pNtM/YP
        5zmJECBXOsD3cIFOCk3uAHcASLDja9qmRzQP5WoC+p0w6xxSActW3SyB2bu/qznY
        hHMAAAGHAA6IFAAABAMASDBGAiEA+5wSu07GI5x9JtuNPgxWlYmsG746q1LwIuXp
        bA5fxUICIQDRwHkM/5idHE2CnrOdwuc+h3BXJal+OBNfOIPW3HDBXgB3ADtTd3U+
        LbmAToswWwb+QDtn2E/D9Me9AA0tcm/h+tQXAAABhwAOiAoAAAQDAEgwRgIhAO1z
        9iG/Ba+bQFZsAFT4KPFiZMMCLzcsm61pn1V11b3lAiEAuTa1v4bbm26xyB45TZi8
        QLSzE8TR2Bnzn7j1w+r/hbwwDQYJKoZIhvcNAQELBQADggEBAIXiEU/EaThIZ87q
        h+kKddjT8Yqz+IDLJavky7F2m1aZEYG8vqnaL8kU4xd1TOs3+t62SPidsIXE7lmd
        H63wzJc4+u/n/f14G0YlXnLv0br3LT2/wQAjTqs5Fvx16VB+iz1sk7YAS5whYUB3
        ibNHMG4irZn5g7KbtCXPszfJKjr57qc/sYjVgPH5HfYclCZJTcpqnw1RiwOw6jKS
        nL4imvMm/CFwbjEsszCksPHrgnBRrizlxU4XISEhlYFQoY1eySNr0gZY6kDnrH+E
        hrHn8H2ucAp88Ky/FYOLiYCOn0Vx4xC8ggQc0VA2tkCX9TVDtijT5tLsmlJtphwT
        Pj9JAXo=
        -----END CERTIFICATE-----
        """

    static let issuerPEM = """
        -----BEGIN CERTIFICATE-----
        MIIE6jCCA9KgAwIBAgIQCjUI1VwpKwF9+K1lwA/35DANBgkqhkiG9w0BAQsFADBh
        MQswCQYDVQQGEwJVUzEVMBMGA1UEChMMRGlnaUNlcnQgSW5jMRkwFwYDVQQLExB3
        d3cuZGlnaWNlcnQuY29tMSAwHgYDVQQDExdEaWdpQ2VydCBHbG9iYWwgUm9vdCBD
        QTAeFw0yMDA5MjQwMDAwMDBaFw0zMDA5MjMyMzU5NTlaME8xCzAJBgNVBAYTAlVT
        MRUwEwYDVQQKEwxEaWdpQ2VydCBJbmMxKTAnBgNVBAMTIERpZ2lDZXJ0IFRMUyBS
        U0EgU0hBMjU2IDIwMjAgQ0ExMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKC
        AQEAwUuzZUdwvN1PWNvsnO3DZuUfMRNUrUpmRh8sCuxkB+Uu3Ny5CiDt3+PE0J6a
        qXodgojlEVbbHp9YwlHnLDQNLtKS4VbL8Xlfs7uHyiUDe5pSQWYQYE9XE0nw6Ddn
        g9/n00tnTCJRpt8OmRDtV1F0JuJ9x8piLhMbfyOIJVNvwTRYAIuE//i+p1hJInuW
        raKImxW8oHzf6VGo1bDtN+I2tIJLYrVJmuzHZ9bjPvXj1hJeRPG/cUJ9WIQDgLGB
        Afr5yjK7tI4nhyfFK3TUqNaX3sNk+crOU6JWvHgXjkkDKa77SU+kFbnO8lwZV21r
        eacroicgE7XQPUDTITAHk+qZ9QIDAQABo4IBrjCCAaowHQYDVR0OBBYEFLdrouqo
        qoSMeeq02g+YssWVdrn0MB8GA1UdIwQYMBaAFAPeUDVW0Uy7ZvCj4hsbw5eyPdFV
        MA4GA1UdDwEB/wQEAwIBhjAdBgNVHSUEFjAUBggrBgEFBQcDAQYIKwYBBQUHAwIw
        EgYDVR0TAQH/BAgwBgEB/wIBADB2BggrBgEFBQcBAQRqMGgwJAYIKwYBBQUHMAGG
        GGh0dHA6Ly9vY3NwLmRpZ2ljZXJ0LmNvbTBABggrBgEFBQcwAoY0aHR0cDovL2Nh
        Y2VydHMuZGlnaWNlcnQuY29tL0RpZ2lDZXJ0R2xvYmFsUm9vdENBLmNydDB7BgNV
        HR8EdDByMDegNaAzhjFodHRwOi8vY3JsMy5kaWdpY2VydC5jb20vRGlnaUNlcnRH
        bG9iYWxSb290Q0EuY3JsMDegNaAzhjFodHRwOi8vY3JsNC5kaWdpY2VydC5jb20v
        RGlnaUNlcnRHbG9iYWxSb290Q0EuY3JsMDAGA1UdIAQpMCcwBwYFZ4EMAQEwCAYG
        Z4EMAQIBMAgGBmeBDAECAjAIBgZngQwBAgMwDQYJKoZIhvcNAQELBQADggEBAHer
        t3onPa679n/gWlbJhKrKW3EX3SJH/E6f7tDBpATho+vFScH90cnfjK+URSxGKqNj
        OSD5nkoklEHIqdninFQFBstcHL4AGw+oWv8Zu2XHFq8hVt1hBcnpj5h232sb0HIM
        ULkwKXq/YFkQZhM6LawVEWwtIwwCPgU7/uWhnOKK24fXSuhe50gG66sSmvKvhMNb
        g0qZgYOrAKHKCjxMoiWJKiKnpPMzTFuMLhoClw+dj20tlQj7T9rxkTgl4ZxuYRiH
        as6xuwAwapu3r9rxxZf+ingkquqTgLozZXq8oXfpf2kUCwA/d5KxTVtzhwoT0JzI
        8ks5T1KESaZMkE4f97Q=
        -----END CERTIFICATE-----
        """

    /// (description, operator, base64 SubjectPublicKeyInfo, shard start, shard end) from the v3 list.
    static let logs: [(String, String, String, String, String)] = [
        (
            "Google 'Argon2024' log", "Google",
            "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEHblsqctplMVc5ramA7vSuNxUQxcomQwGAVAdnWTAWUYr3MgDHQW0LagJ95lB7QT75Ve6JgT2EVLOFGU7L3YrwA==",
            "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"
        ),
        (
            "DigiCert Yeti2024 Log", "DigiCert",
            "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEV7jBbzCkfy7k8NDZYGITleN6405Tw7O4c4XBGA0jDliE0njvm7MeLBrewY+BGxlEWLcAd2AgGnLYgt6unrHGSw==",
            "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"
        ),
        (
            "Let's Encrypt 'Oak2024H1' log", "Let's Encrypt",
            "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEVkPXfnvUcre6qVG9NpO36bWSD+pet0Wjkv3JpTyArBog7yUvuOEg96g6LgeN5uuk4n0kY59Gv5RzUo2Wrqkm/Q==",
            "2023-12-20T00:00:00Z", "2024-07-20T00:00:00Z"
        ),
    ]

    /// 2023-06-01, inside the certificate's validity.
    static let checkTime: Int64 = 1_685_577_600

    static func logList() throws -> CTLogList {
        let logs = try Self.logs.map { name, operatorName, key, start, end in
            try CTLog(
                publicKeyInfo: SubjectPublicKeyInfo(derEncoded: try #require(Base64.decode(Array(key.utf8)))), name: name, operatorName: operatorName,
                state: CTLogState(.usable, since: try #require(ASN1Time(rfc3339: "2022-11-01T00:00:00Z"))),
                temporalInterval: CTTemporalInterval(
                    startInclusive: try #require(ASN1Time(rfc3339: start)), endExclusive: try #require(ASN1Time(rfc3339: end))))
        }
        return try CTLogList(logs: logs, timestamp: ASN1Time(secondsSince1970: checkTime - 86_400))
    }
}

@Suite("CT on a public certificate")
struct PublicCertificateCTTests {
    @Test("the three embedded SCTs verify with the logs' published keys, as OpenSSL's SCT_validate finds too")
    func embeddedSCTsVerify() throws {
        let leaf = try Certificate(pemEncoded: PublicCTFixture.leafPEM)
        let issuer = try Certificate(pemEncoded: PublicCTFixture.issuerPEM)
        for policy in CTPolicy.allCases {
            let evaluation = CertificateTransparency.evaluate(
                leaf: leaf, issuer: issuer, logList: try PublicCTFixture.logList(), policy: policy, at: PublicCTFixture.checkTime)
            #expect(evaluation.scts.count == 3)
            #expect(evaluation.scts.allSatisfy { $0.status == .valid }, "\(evaluation)")
            #expect(evaluation.verdict == .compliant, "\(evaluation)")
        }
        let keys = try PublicCTFixture.logs.map { try #require(Base64.decode(Array($0.2.utf8))) }
        let list = try #require(leaf.extensions.signedCertificateTimestamps)
        for sct in try SignedCertificateTimestampList(tlsEncoded: list).timestamps {
            let status = try LabCTOracle.validate(
                sct: sct.serialized, embedded: true, certificate: leaf.derBytes, issuer: issuer.derBytes, logKeys: keys,
                at: UInt64(PublicCTFixture.checkTime) * 1000)
            #expect(status == .valid)
        }
    }

    @Test("with the wrong issuer key or as an x509 entry, the same SCTs do not verify")
    func wrongEntryFails() throws {
        let leaf = try Certificate(pemEncoded: PublicCTFixture.leafPEM)
        let issuer = try Certificate(pemEncoded: PublicCTFixture.issuerPEM)
        let wrongIssuer = try Certificate(derEncoded: LabPKI.webChain(host: "x.example.test", keySlot: CTSlot.otherCA).intermediate.der)
        let logList = try PublicCTFixture.logList()
        let wrong = CertificateTransparency.evaluate(leaf: leaf, issuer: wrongIssuer, logList: logList, policy: .chrome, at: PublicCTFixture.checkTime)
        #expect(wrong.scts.allSatisfy { if case .badSignature = $0.status { return true } else { return false } })
        // The embedded list delivered as if over TLS: the signature covers the precertificate,
        // not the certificate.
        let list = try #require(leaf.extensions.signedCertificateTimestamps)
        let asTLS = CertificateTransparency.evaluate(
            leaf: leaf, issuer: issuer, tlsSCTList: Array(list), logList: logList, policy: .chrome, at: PublicCTFixture.checkTime)
        #expect(asTLS.scts.filter { $0.source == .tlsExtension }.allSatisfy { !$0.status.isValid })
    }
}
