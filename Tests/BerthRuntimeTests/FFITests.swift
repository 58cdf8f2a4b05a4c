import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Every supported type as argument and result, through real libffi calls into the C
/// fixture library's echo exports.
@Suite("libffi calls") @MainActor
struct FFITests {
    static var echoExports: [[String: Any]] { ValueType.parameterTypes.map { type in
        ["symbol": "fx_echo_\(type.rawValue)", "params": [type.rawValue], "returns": type.rawValue]
    } + [
        ["symbol": "fx_sum_mixed", "params": ["int8", "uint16", "int32", "int64", "float", "double"], "returns": "double"],
        ["symbol": "fx_bytes_length_between", "params": ["int32", "bytes", "int32"], "returns": "uint64"],
        ["symbol": "fx_bump_void", "params": [], "returns": "void"],
        ["symbol": "fx_bump", "params": [], "returns": "int64"],
    ] }

    private let workspace = PluginWorkspace()
    private let generation: PluginGeneration
    private let host: BerthHost

    init() throws {
        workspace.stageFixture(folder: "fixture") { $0["exports"] = FFITests.echoExports }
        host = try workspace.makeHost()
        generation = try host.load("org.berth.fixtures")
    }

    nonisolated static let roundTrips: [FFIValue] = [
        .bool(true), .bool(false),
        .int8(-128), .int8(127), .int16(-32768), .int16(32767),
        .int32(Int32.min), .int32(Int32.max), .int64(Int64.min), .int64(Int64.max),
        .uint8(255), .uint16(65535), .uint32(UInt32.max), .uint64(UInt64.max),
        .float(-1.5), .float(Float.greatestFiniteMagnitude), .double(3.141592653589793), .double(-0.0),
        .string(""), .string("héllo, wörld ✓"),
        .bytes([]), .bytes([0, 1, 2, 254, 255]),
    ]

    @Test("each type round-trips through an echo export", arguments: roundTrips)
    func echo(_ value: FFIValue) throws {
        let result = try generation.call("fx_echo_\(value.type.rawValue)", arguments: [value])
        #expect(result == value)
    }

    @Test("mixed argument types arrive in order and widened correctly")
    func mixedArguments() throws {
        let result = try generation.call("fx_sum_mixed", arguments: [.int8(-1), .uint16(2), .int32(-3), .int64(4_000_000_000), .float(0.5), .double(0.25)])
        #expect(result == .double(4_000_000_000 - 2 + 0.75))
    }

    @Test("a bytes parameter is two C arguments, pointer and length")
    func bytesBetweenArguments() throws {
        let result = try generation.call("fx_bytes_length_between", arguments: [.int32(10), .bytes([1, 2, 3]), .int32(5)])
        #expect(result == .uint64(18))
    }

    @Test("void calls run and return void")
    func voidCall() throws {
        #expect(try generation.call("fx_bump_void", arguments: []) == .void)
        #expect(try generation.call("fx_bump", arguments: []) == .int64(2))
    }

    @Test("text arguments are converted by the signature")
    func textArguments() throws {
        #expect(try generation.call("fx_echo_uint8", textArguments: ["0xff"]) == .uint8(255))
        #expect(try generation.call("fx_echo_int16", textArguments: ["-300"]) == .int16(-300))
        #expect(try generation.call("fx_echo_bytes", textArguments: ["hex:00ff"]) == .bytes([0, 255]))
        #expect(try generation.call("fx_echo_bytes", textArguments: ["AB"]) == .bytes([65, 66]))
        #expect(try generation.call("fx_echo_bool", textArguments: ["true"]) == .bool(true))
        #expect(try generation.call("fx_echo_double", textArguments: ["1e-3"]) == .double(0.001))
    }

    struct BadCall: Sendable, CustomTestStringConvertible {
        let symbol: String
        let arguments: [String]
        let code: FFIError.Code
        let message: String
        var testDescription: String { "\(symbol) \(arguments)" }
    }

    nonisolated static let badCalls: [BadCall] = [
        BadCall(symbol: "fx_echo_int8", arguments: ["128"], code: .badArgument, message: "'128' overflows int8 (-128...127)"),
        BadCall(symbol: "fx_echo_uint8", arguments: ["-1"], code: .badArgument, message: "'-1' overflows uint8 (0...255)"),
        BadCall(symbol: "fx_echo_int32", arguments: ["12abc"], code: .badArgument, message: "'12abc' is not an integer"),
        BadCall(symbol: "fx_echo_bool", arguments: ["yes"], code: .badArgument, message: "'yes' is not a bool"),
        BadCall(symbol: "fx_echo_float", arguments: ["1e39"], code: .badArgument, message: "overflows float"),
        BadCall(symbol: "fx_echo_double", arguments: ["pi"], code: .badArgument, message: "'pi' is not a double"),
        BadCall(symbol: "fx_echo_bytes", arguments: ["hex:abc"], code: .badArgument, message: "odd number of digits"),
        BadCall(symbol: "fx_echo_int32", arguments: [], code: .arity, message: "takes 1 argument(s)"),
        BadCall(symbol: "fx_echo_int32", arguments: ["1", "2"], code: .arity, message: "got 2"),
        BadCall(symbol: "fx_missing", arguments: [], code: .unknownSymbol, message: "has no export 'fx_missing'"),
    ]

    @Test("bad calls are refused with a clear message before anything is called", arguments: badCalls)
    func badCall(_ call: BadCall) throws {
        let before = try generation.call("fx_bump", arguments: [])
        #expect { try generation.call(call.symbol, textArguments: call.arguments) } throws: { error in
            let error = error as! FFIError
            return error.code == call.code && error.message.contains(call.message)
        }
        let after = try generation.call("fx_bump", arguments: [])
        #expect(after == .int64({ if case .int64(let count) = before { count + 1 } else { -1 } }()))
    }

    @Test("typed arguments of the wrong type are refused")
    func wrongTypedArgument() {
        #expect(throws: FFIError(.badArgument, "argument 1 of fx_echo_int32 must be int32, got int64")) {
            try generation.call("fx_echo_int32", arguments: [.int64(1)])
        }
    }

    @Test("a typed call site calls with Swift values and no FFIValue, every scalar in order")
    func typedCallSite() throws {
        let echo = try generation.exportCallSite("fx_echo_int32", arguments: Int32.self, returning: Int32.self)
        #expect(try echo(Int32.min) == Int32.min)
        #expect(try echo(42) == 42)
        let mixed = try generation.exportCallSite(
            "fx_sum_mixed", arguments: Int8.self, UInt16.self, Int32.self, Int64.self, Float.self, Double.self, returning: Double.self
        )
        #expect(try mixed(-1, 2, -3, 4_000_000_000, 0.5, 0.25) == 4_000_000_000 - 2 + 0.75)
        let flag = try generation.exportCallSite("fx_echo_bool", arguments: Bool.self, returning: Bool.self)
        #expect(try flag(true) && !(try flag(false)))
        let bumpVoid = try generation.exportCallSite("fx_bump_void", returning: ExportVoid.self)
        let bump = try generation.exportCallSite("fx_bump", returning: Int64.self)
        let before = try bump()
        _ = try bumpVoid()
        #expect(try bump() == before + 2)
    }

    @Test("a call site bound with other types than the manifest's is refused, naming both")
    func typedCallSiteWrongTypes() {
        #expect(throws: FFIError(.badArgument, "org.berth.fixtures declares int32 fx_echo_int32(int32); bound as int64 fx_echo_int32(int64)")) {
            try generation.exportCallSite("fx_echo_int32", arguments: Int64.self, returning: Int64.self)
        }
        #expect(throws: FFIError.self) { try generation.exportCallSite("fx_missing", returning: ExportVoid.self) }
    }

    @Test("a call site of an ended generation throws instead of calling")
    func typedCallSiteAfterUnload() throws {
        let echo = try generation.exportCallSite("fx_echo_int32", arguments: Int32.self, returning: Int32.self)
        #expect(try echo(7) == 7)
        try host.unload("org.berth.fixtures")
        #expect { try echo(7) } throws: { error in
            (error as? FFIError)?.message.contains("bind fx_echo_int32 again") == true
        }
    }
}
