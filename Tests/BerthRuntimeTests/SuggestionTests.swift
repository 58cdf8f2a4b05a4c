import Testing
@_spi(Engine) @testable import BerthRuntime

@Suite("Did you mean")
struct SuggestionTests {
    @Test("a typo is matched; ids that only share their com.example. start are not alike")
    func typosOnly() {
        let ids = ["com.example.counter", "com.example.greeter", "com.example.typo"]
        #expect(Suggestion.closest(to: "com.example.greter", among: ids) == "com.example.greeter")
        #expect(Suggestion.closest(to: "com.example.nobody", among: ids) == nil)
        #expect(Suggestion.closest(to: "com.example.nope", among: ids) == nil)
        #expect(Suggestion.closest(to: "scren", among: ["screen", "scopes", "send"]) == "screen")
        #expect(Suggestion.hint(for: "greeter_ad", among: ["greeter_add", "greeter_greet"]) == " (did you mean 'greeter_add'?)")
        #expect(Suggestion.hint(for: "counter", among: ["counter"]).isEmpty)
        // Two letters swapped are one edit, wherever they are.
        let commands = ["reload", "screen", "discover", "open", "unload"]
        for (typo, meant) in [("relaod", "reload"), ("screne", "screen"), ("discvoer", "discover"), ("opne", "open")] {
            #expect(Suggestion.closest(to: typo, among: commands) == meant, "\(typo)")
        }
        #expect(Suggestion.closest(to: "incremnet", among: ["increment", "decrement"]) == "increment")
        #expect(Suggestion.editDistance("kitten", "sitting") == 3)
        #expect(Suggestion.editDistance("", "abc") == 3)
        #expect(Suggestion.editDistance("abc", "") == 3)
    }
}
