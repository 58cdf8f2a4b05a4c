import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime

@Suite("ParentPath: the folder part of a path")
struct ParentPathTests {
    @Test("agrees with deletingLastPathComponent where that does not trap, and answers where it does",
          arguments: [("a/b", "a"), ("/a", "/"), ("/", "/"), ("a//b/", "a"), ("/a/b/c.so", "/a/b"), ("../h", ".."), ("ab", ""), ("", ""),
                      ("h", ""), (".", ""), ("x/", ""), ("./", ""), ("//a", "/")])
    func parent(_ path: String, _ expected: String) {
        #expect(ParentPath.of(path) == expected)
    }
}
