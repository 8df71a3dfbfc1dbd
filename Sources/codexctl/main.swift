import Foundation

let status = await RootCommand.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
