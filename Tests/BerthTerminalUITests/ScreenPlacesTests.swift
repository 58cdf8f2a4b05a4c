@testable import BerthTerminalUI
import Testing

/// Focus, scroll and carets kept per screen, and when a frame is laid out.
@Suite("Terminal UI: places per screen and the redraw schedule")
struct ScreenPlacesTests {
    private let order: [FocusTarget] = [.view("a"), .view("b"), .action("go")]

    @Test("focus moves round the order, per screen; from nothing forward is the first, back the last")
    func focusMoves() {
        var places = ScreenPlaces()
        places.moveFocus(by: -1, on: 1, order: order)
        #expect(places.focus[1] == .action("go"))
        places.moveFocus(by: 1, on: 1, order: order)
        #expect(places.focus[1] == .view("a"))
        places.moveFocus(by: 1, on: 2, order: order)
        #expect(places.focus[2] == .view("a"))
        places.moveFocus(by: 1, on: 2, order: [])
        #expect(places.focus[2] == .view("a"))
    }

    @Test("scrolling by hand stops following focus, never above the top; focusing follows again")
    func scrolling() {
        var places = ScreenPlaces()
        places.scroll(by: -3, on: 1)
        #expect(places.scroll[1] == 0 && !places.followFocus)
        places.scroll(by: 5, on: 1)
        #expect(places.scroll[1] == 5)
        places.setFocus(.view("b"), on: 1, order: order)
        #expect(places.followFocus)
    }

    @Test("when the focused target goes away, focus lands where it was in the order")
    func refocus() {
        var places = ScreenPlaces()
        var landed = places.refocus(on: 1, order: order)
        #expect(landed == .view("a"))
        places.setFocus(.action("go"), on: 1, order: order)
        landed = places.refocus(on: 1, order: order)
        #expect(landed == nil)
        places.noteDrawn(on: 1, order: order, scroll: 4)
        #expect(places.scroll[1] == 4)
        landed = places.refocus(on: 1, order: [.view("a"), .view("c")])
        #expect(landed == .view("c"))
        landed = places.refocus(on: 1, order: [])
        #expect(landed == nil)
    }

    @Test("carets are kept per screen and view; nil puts one back at the end")
    func carets() {
        var places = ScreenPlaces()
        places.setCaret(2, of: "name", on: 1)
        #expect(places.caret(of: "name", on: 1) == 2 && places.caret(of: "name", on: 2) == nil)
        #expect(places.caret(for: .view("name"), on: 1)?.offset == 2)
        #expect(places.caret(for: .action("name"), on: 1) == nil)
        places.setCaret(nil, of: "name", on: 1)
        #expect(places.caret(of: "name", on: 1) == nil && places.carets[1] == [:])
    }

    @Test("requests coalesce; a host change already drawn asks for no frame; an unchanged frame is not laid out")
    func schedule() {
        var schedule = RedrawSchedule()
        let first = schedule.request(), second = schedule.request()
        #expect(first && !second && schedule.isPending)
        schedule.startDrawing()
        #expect(!schedule.isPending)
        #expect(schedule.showsOlder(than: 0), "before the first frame every host change is new")
        let key = FrameKey(size: (80, 24), screen: 0, places: ScreenPlaces(), banner: nil, message: nil, commandLine: nil, inspector: false)
        let step1 = schedule.shouldLayOut(key, hostChange: 3, terminalShowsLast: false, always: false)
        #expect(step1)
        schedule.laidOut(key, hostChange: 3)
        let step2 = schedule.shouldLayOut(key, hostChange: 3, terminalShowsLast: true, always: false)
        #expect(!step2)
        let step3 = schedule.shouldLayOut(key, hostChange: 3, terminalShowsLast: false, always: false)
        #expect(step3)
        let step4 = schedule.shouldLayOut(key, hostChange: 3, terminalShowsLast: true, always: true)
        #expect(step4)
        var moved = key
        moved.message = "hello"
        let step5 = schedule.shouldLayOut(moved, hostChange: 3, terminalShowsLast: true, always: false)
        #expect(step5)
        // The front end's own operation ended (change 4) and its frame was drawn: the
        // `.changed` read afterwards finds the frame current.
        let step6 = schedule.shouldLayOut(key, hostChange: 4, terminalShowsLast: true, always: false)
        #expect(step6)
        schedule.laidOut(key, hostChange: 4)
        #expect(!schedule.showsOlder(than: 4))
        // A change from elsewhere (a tick) is newer than the frame.
        #expect(schedule.showsOlder(than: 5))
        #expect(schedule.framesLaidOut == 5)
    }
}
