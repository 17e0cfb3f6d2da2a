// The `servertrust` command: thin argument handling over the libraries. Every subcommand
// prints a one-line error and exits non-zero on bad input (docs/bad-input-catalogue.md §9).
#if canImport(Glibc)
    import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let status = CLI.run(arguments)
exit(status)
