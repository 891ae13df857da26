"""The facilitator's rulings in the detection score: their word over the pattern's, said so in
the reasons, on the judge's own (facts in, verdicts out)."""

from __future__ import annotations

from pathlib import Path

from raceday.engine.load import load_exercise
from raceday.judge.facts import Facts, own_words_key
from raceday.judge.score import score_session

FLAGSHIP = load_exercise(Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race")


def hhmm(minute: int) -> str:
    return f"{23 + minute // 60:02d}:{minute % 60:02d}"


def facts(**kw: object) -> Facts:
    f = Facts(fault_started=48, outages=[[48, None]])
    for key, value in kw.items():
        setattr(f, key, value)
    return f


def detection(f: Facts) -> tuple[int, str | None, str]:
    d = score_session(FLAGSHIP, f, hhmm).detection
    assert d is not None
    return d.points, d.diagnosis, "\n".join(d.reasons)


def test_a_finding_ruled_right_is_a_diagnosis_and_costs_nothing() -> None:
    """The judge called it wrong (its evidence never shown); the facilitator heard why."""
    plain = facts(declarations=[(52, "ddos-attack", False)])
    ruled = facts(declarations=[(52, "ddos-attack", False)],
                  rulings=[(52, "ddos-attack", "right", "they meant the retry storm")])
    before, _, _ = detection(plain)
    after, diagnosis, why = detection(ruled)
    assert before == 0
    assert after > before and diagnosis == "ddos-attack"
    assert ("the facilitator ruled 'A DDoS attack is overwhelming the DynamoDB endpoint' at "
            "23:52 right: they meant the retry storm") in why


def test_a_confirmed_finding_ruled_wrong_costs_and_is_no_diagnosis() -> None:
    base = dict(declarations=[(50, "empty-dns-record", True)], confirmed=[(50, "empty-dns-record")])
    before, diagnosis, _ = detection(facts(**base))
    after, gone, why = detection(facts(**base, rulings=[
        (50, "empty-dns-record", "right", ""), (50, "empty-dns-record", "wrong", "a guess")]))
    assert diagnosis == "empty-dns-record" and before > 0
    assert gone is None and after == 0  # the last ruling counts
    assert "at 23:50 wrong: a guess" in why


def test_partly_right_neither_costs_nor_counts() -> None:
    ruled = facts(declarations=[(52, "ddos-attack", False)],
                  rulings=[(52, "ddos-attack", "partly", "")])
    points, diagnosis, why = detection(ruled)
    assert diagnosis is None and points == 0
    assert "wrong finding" not in why and "partly right" in why


def test_a_false_alarm_ruled_right_costs_nothing() -> None:
    base = dict(declarations=[(10, "empty-dns-record", True)], false_alarms=[(10, "empty-dns-record")],
                monitor_alerts=[(49, "empty")])
    before, _, _ = detection(facts(**base))
    after, _, why = detection(facts(**base, rulings=[(10, "empty-dns-record", "right", "")]))
    assert after == before + FLAGSHIP.scoring.detection.wrong_finding_cost  # type: ignore[union-attr]
    assert "false alarm" not in why.split("ruled")[-1]


def test_own_words_count_only_as_ruled_each_said_in_one_reason() -> None:
    """Unruled or partly right: nothing; right from the fault on: a diagnosis (before it:
    nothing); wrong: a wrong finding's cost. A monitor surfaced the fault, so a cost shows."""
    words = {"unruled": 50, "partly": 51, "early": 40, "wrong": 53, "right": 55}
    base = dict(own_words=[(m, w) for w, m in words.items()],
                monitor_alerts=[(49, "empty-endpoints")])
    plain, _, _ = detection(facts(monitor_alerts=[(49, "empty-endpoints")]))
    unruled, none, why = detection(facts(**base))
    assert unruled == plain and none is None  # nothing ruled: as if never declared
    rulings = [(words[w], own_words_key(w), r, "") for w, r in (
        ("partly", "partly"), ("early", "right"), ("wrong", "wrong"), ("right", "right"))]
    ruled, diagnosis, why = detection(facts(**base, rulings=rulings))
    cost = FLAGSHIP.scoring.detection.wrong_finding_cost  # type: ignore[union-attr]
    assert cost > 0 and ruled == plain - cost
    assert diagnosis == own_words_key("right")
    lines = [x for x in why.splitlines() if "(own words" in x]
    assert lines == [
        "detection: 'unruled' (own words, 23:50) was not ruled: it neither counts nor costs",
        "detection: 'partly' (own words, 23:51) ruled partly right: it neither counts nor costs",
        "detection: 'early' (own words, 23:40) ruled right, but it came before the fault "
        "began: it does not count",
        "detection: 'wrong' (own words, 23:53) ruled wrong: it costs what a wrong finding costs",
        "detection: 'right' (own words, 23:55) ruled right: it counts as a diagnosis"]
    assert "time to diagnosis 7 minutes ('right' at 23:55)" in why
    assert f"detection -{cost}: wrong finding declared ('wrong' at 23:53)" in why
