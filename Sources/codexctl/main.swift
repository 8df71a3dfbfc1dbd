import Foundation

ConsoleOutput.prepareProcess()
let status = await RootCommand.run(Array(CommandLine.arguments.dropFirst()))
exit(ConsoleOutput.exitStatus(after: status))
