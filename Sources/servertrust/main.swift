// The `servertrust` command: thin argument handling over the libraries. Every subcommand
// prints a one-line error and exits non-zero on bad input (DEVELOPERS.md "Bad input").
#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let status = CLI.run(arguments)
exit(status)
