import Foundation

/// Unbuffered writes to the standard streams, so stdout and stderr interleave in order.
enum FileHandleOutput {
    static func standardError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    static func standardOutput(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// Prints a line to stdout without buffering.
func emitLine(_ text: String) {
    FileHandleOutput.standardOutput(text + "\n")
}
