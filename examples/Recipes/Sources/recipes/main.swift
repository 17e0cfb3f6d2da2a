import Foundation

// `recipes NAME ARGUMENT…` runs one recipe of Recipes.swift and prints what it returned; a
// thrown error is printed as `error: …` with exit status 1 (RecipesTests runs each recipe,
// and the pinned ones also against a server they must refuse).

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first else {
    print("usage: recipes NAME ARGUMENT…")
    exit(2)
}
let values = Array(arguments.dropFirst())

func value(_ index: Int) -> String {
    guard index < values.count else {
        print("error: \(name) needs \(index + 1) arguments")
        exit(2)
    }
    return values[index]
}

do {
    switch name {
    case "private-ca":
        print(try await getWithPrivateCA(value(0), caFile: value(1)), terminator: "")
    case "pinned-certificates":
        print(try await getWithPinnedCertificates(value(0), certificatesFolder: value(1)), terminator: "")
    case "pins":
        print(try await getWithPins(value(0), host: value(1), pins: Array(values.dropFirst(2))), terminator: "")
    case "policy-file":
        print(try await getWithPolicyFile(value(0), policyFile: value(1)), terminator: "")
    case "basic-auth":
        print(try await getWithBasicAuth(value(0), user: value(1), password: value(2)), terminator: "")
    case "client-certificate":
        print(try await getWithClientCertificate(value(0), host: value(1), p12File: value(2), password: value(3)), terminator: "")
    case "private-ca-pins":
        print(try await getWithPrivateCAAndPins(value(0), host: value(1), caFile: value(2), pins: Array(values.dropFirst(3))), terminator: "")
    case "urlsession":
        guard let url = URL(string: value(0)) else {
            print("error: not a URL: \(value(0))")
            exit(2)
        }
        print(try await getThroughURLSession(url, caFile: value(1)), terminator: "")
    case "json":
        let (posted, user) = try await postAndGetJSON(value(0), value(1))
        print("posted \(posted)")
        print("user \(user.id) \(user.name)")
    case "upload":
        print(try await uploadFile(value(0), path: value(1)), terminator: "")
    default:
        print("error: no recipe \(name)")
        exit(2)
    }
} catch {
    print("error: \(error)")
    exit(1)
}
