"""Each broken exercise says exactly what is wrong, where: `file:line: what`.

Every case starts from the minimal fixture and makes one change, so the problem list must be
exactly the one expected line (never a traceback, never a cascade of follow-on noise).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from exercise_fixtures import Broken

from raceday.engine.load import load_exercise
from raceday.errors import ExerciseError, InputError


def problems(broken: Broken) -> list[str]:
    with pytest.raises(ExerciseError) as info:
        load_exercise(broken.folder.relative_to(broken.root))
    assert isinstance(info.value, InputError)
    return info.value.problems


def test_unknown_key(broken: Broken) -> None:
    broken.replace(
        "    title: Read the current value\n",
        "    title: Read the current value\n    colour: red\n",
    )
    assert problems(broken) == [
        broken.at(
            "    colour: red",
            'task "writer-a-read": unknown key "colour" (known keys: id, role, at, title, '
            "statements, every, until, when, skipped, remember, on_zero_rows, on_error, retry, done_when, "
            "context, hint, points, proves, keeps)",
        )
    ]


def test_unknown_key_far_from_any_known_one_lists_the_known_keys(broken: Broken) -> None:
    broken.replace("  zone: PDT\n", "  zone: PDT\n  xyzzy: 1\n")
    assert problems(broken) == [
        broken.at(
            "  xyzzy: 1",
            'clock: unknown key "xyzzy" (known keys: start, end, date, zone, minutes_per_statement, '
            'minutes_per_look)',
        )
    ]


def test_misspelt_key_is_unknown_and_the_real_one_missing(broken: Broken) -> None:
    broken.replace("    title: Read the current value\n", "    titel: Read the current value\n")
    assert problems(broken) == [
        broken.at("    titel:", 'task "writer-a-read": unknown key "titel" (did you mean "title"?)'),
        broken.at(
            "  - id: writer-a-read\n    role: writer-a\n    at",
            'task "writer-a-read" is missing required key "title"',
        ),
    ]


def test_wrong_type(broken: Broken) -> None:
    broken.replace("  minutes_per_statement: 2", "  minutes_per_statement: two")
    assert problems(broken) == [
        broken.at(
            "  minutes_per_statement: two",
            'clock: "minutes_per_statement" must be a whole number, not the text "two"',
        )
    ]


def test_wrong_type_list_expected(broken: Broken) -> None:
    broken.replace("    to: [operator]", "    to: operator")
    assert problems(broken) == [
        broken.at("    to: operator", 'inject "pager": "to" must be a list, not the text "operator"')
    ]


def test_missing_required_key(broken: Broken) -> None:
    broken.replace("title: Two writers, one row\n", "")
    assert problems(broken) == [broken.at("id: minimal", 'the exercise is missing required key "title"')]


def test_dangling_role_reference(broken: Broken) -> None:
    broken.replace('    role: writer-b\n    at: "23:50"', '    role: writer-c\n    at: "23:50"')
    assert problems(broken) == [
        broken.at(
            "    role: writer-c",
            'task "writer-b-save": role "writer-c" is not defined (roles: operator, writer-a, writer-b)',
        )
    ]


def test_statement_of_unknown_role(broken: Broken) -> None:
    broken.replace(
        "  - id: writer-b-save\n    role: writer-b\n    sql:",
        "  - id: writer-b-save\n    role: writer-z\n    sql:",
    )
    assert problems(broken) == [
        broken.at(
            "    role: writer-z",
            'statement "writer-b-save": role "writer-z" is not defined (roles: operator, writer-a, writer-b)',
        )
    ]


def test_unknown_statement_reference(broken: Broken) -> None:
    broken.replace("    statements: [writer-b-save]", "    statements: [writer-b-sav]")
    assert problems(broken) == [
        broken.at(
            "    statements: [writer-b-sav]",
            'task "writer-b-save": statement "writer-b-sav" is not defined '
            "(statements: writer-a-read, writer-a-save, writer-b-save)",
        )
    ]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "    to: [operator]",
            "    to: [operator, ops]",
            'inject "pager": role "ops" is not defined (roles: operator, writer-a, writer-b)',
        ),
        (
            "default_roles: [operator]",
            "default_roles: [opertor]",
            'the exercise: role "opertor" is not defined (roles: operator, writer-a, writer-b)',
        ),
        (
            "    task: guard-version",
            "    task: guard",
            'hint "use-version": task "guard" is not defined (tasks: guard-version, heartbeat, '
            "writer-a-read, writer-a-save, writer-b-save)",
        ),
        (
            "    invariant: lost-update",
            "    invariant: lost-updates",
            'scoring.detection: invariant "lost-updates" is not defined (invariants: lost-update)',
        ),
        (
            "        task: writer-a-save",
            "        task: writer-a-apply",
            'race step "stale-write": task "writer-a-apply" is not defined (tasks: guard-version, '
            "heartbeat, writer-a-read, writer-a-save, writer-b-save)",
        ),
        (
            "        before: repaired",
            "        before: fixed",
            'recovery item "stopped-first": milestone "fixed" is not defined '
            "(milestones: automation-stopped, repaired)",
        ),
        (
            "        role: writer-b\n        sql:",
            "        role: nobody\n        sql:",
            'good path "fresh-write": role "nobody" is not defined (roles: operator, writer-a, writer-b)',
        ),
    ],
)
def test_dangling_references(broken: Broken, old: str, new: str, message: str) -> None:
    broken.replace(old, new)
    assert problems(broken) == [broken.at(new.split("\n")[0], message)]


def test_duplicate_id(broken: Broken) -> None:
    broken.replace("  - id: disk-full", "  - id: lost-update")
    first = broken.line_of("  - id: lost-update\n    text: Writer A")
    assert problems(broken) == [
        broken.at(
            "  - id: lost-update\n    text: The database",
            f'duplicate finding id "lost-update" (first defined at line {first})',
        )
    ]


def test_ids_may_repeat_across_lists(broken: Broken) -> None:
    # The fixture has an invariant and a finding both called lost-update, and a task and a
    # statement both called writer-b-save: each list is its own namespace.
    assert load_exercise(broken.folder).finding("lost-update") is not None


def test_duplicate_yaml_key(broken: Broken) -> None:
    broken.replace("  zone: PDT\n", "  zone: PDT\n  zone: UTC\n")
    first = broken.line_of("  zone: PDT")
    assert problems(broken) == [
        broken.at("  zone: UTC", f'duplicate key "zone" (first written at line {first})')
    ]


def test_id_must_equal_folder_name(broken: Broken) -> None:
    broken.replace("id: minimal\n", "id: minimal-two\n")
    assert problems(broken) == [
        broken.at("id: minimal-two", 'id "minimal-two" must equal the folder name "minimal"')
    ]


def test_id_must_be_an_id(broken: Broken) -> None:
    broken.replace("  - id: pager", "  - id: the pager")
    assert problems(broken) == [
        broken.at(
            "  - id: the pager",
            'inject "the pager": "id" "the pager" is not an id (letters, digits, \'-\', \'_\' '
            "and '.', starting with a letter or digit)",
        )
    ]


def test_bad_time_string(broken: Broken) -> None:
    broken.replace('    at: "23:40"', '    at: "24:40"')
    assert problems(broken) == [
        broken.at(
            '    at: "24:40"',
            'task "writer-a-read": "at" "24:40" is not a time of day (00:00 to 23:59)',
        )
    ]


def test_time_that_is_not_hh_mm(broken: Broken) -> None:
    broken.replace('    at: "00:12"', '    at: "noon"')
    assert problems(broken) == [
        broken.at('    at: "noon"', 'inject "pager": "at" "noon" is not a time "HH:MM"')
    ]


def test_unquoted_time_is_explained(broken: Broken) -> None:
    broken.replace('    at: "23:40"', "    at: 23:40")
    assert problems(broken) == [
        broken.at(
            "    at: 23:40",
            'task "writer-a-read": "at" must be quoted: write "23:40" '
            "(YAML reads 23:40 unquoted as the number 1420)",
        )
    ]


def test_bad_duration(broken: Broken) -> None:
    broken.replace('    every: "1h30m"', '    every: "90 minutes"')
    assert problems(broken) == [
        broken.at(
            '    every: "90 minutes"',
            'task "heartbeat": "every" must be a duration like "10m", "2h", "1h30m" or a number '
            'of minutes, not the text "90 minutes"',
        )
    ]


def test_until_before_at(broken: Broken) -> None:
    broken.replace('    until: "01:15"', '    until: "23:40"')
    assert problems(broken) == [
        broken.at('    until: "23:40"', 'task "heartbeat": "until" "23:40" is before "at" "23:45"')
    ]


def test_retry_until_before_at(broken: Broken) -> None:
    broken.replace('until: "00:40", limit: 3', 'until: "00:05", limit: 3')
    assert problems(broken) == [
        broken.at(
            "    retry: {every",
            'task "writer-a-save" retry: "until" "00:05" is before the task\'s "at" "00:10"',
        )
    ]


def test_task_after_clock_end(broken: Broken) -> None:
    broken.replace('    at: "00:20"', '    at: "02:00"')
    assert problems(broken) == [
        broken.at(
            '    at: "02:00"',
            'task "guard-version": "at" "02:00" is after the clock\'s end "01:30" (a time means '
            'the next time the clock shows it after the start "23:30")',
        )
    ]


def test_time_before_start_means_tomorrow(broken: Broken) -> None:
    broken.replace('    at: "00:12"', '    at: "23:00"')
    assert problems(broken) == [
        broken.at(
            '    at: "23:00"',
            'inject "pager": "at" "23:00" is after the clock\'s end "01:30" (a time means '
            'the next time the clock shows it after the start "23:30")',
        )
    ]


def test_clock_end_must_be_after_start(broken: Broken) -> None:
    broken.replace('  end: "01:30"', '  end: "23:30"')
    assert problems(broken) == [broken.at('  end: "23:30"', 'clock: "end" must be after "start"')]


def test_sql_that_does_not_prepare(broken: Broken) -> None:
    broken.replace("AND value = 150", "AND valu = 150")
    assert problems(broken) == [
        broken.at(
            "    sql: SELECT 1 FROM config WHERE key = 'max_connections' AND valu = 150",
            'invariant "lost-update": "sql" does not prepare against world.sql: no such column: valu',
        )
    ]


def test_sql_syntax_error_in_a_block_scalar(broken: Broken) -> None:
    broken.replace("  UPDATE config SET value = :value + 50", "  UPDATE config SETT value = :value + 50")
    assert problems(broken) == [
        broken.at(
            "    sql: |",
            'statement "writer-a-save": "sql" does not prepare against world.sql: near "SETT": syntax error',
        )
    ]


def test_good_path_sql_item_is_checked(broken: Broken) -> None:
    broken.replace('sql: ["UPDATE config SET value', 'sql: ["UPDATE confg SET value')
    assert problems(broken) == [
        broken.at(
            '        sql: ["UPDATE confg',
            'good path "fresh-write": "sql[1]" does not prepare against world.sql: no such table: confg',
        )
    ]


def test_unknown_parameter(broken: Broken) -> None:
    broken.replace("INSERT INTO change_log VALUES (:now,", "INSERT INTO change_log VALUES (:nowe,")
    assert problems(broken) == [
        broken.at(
            "    sql: |",
            'statement "writer-a-save": "sql" uses :nowe, which no task of role writer-a '
            "remembers (bound: :now, :now_hhmm, :value, :version)",
        )
    ]


def test_remembered_values_belong_to_a_role(broken: Broken) -> None:
    # Writer A remembers :value; writer B's statement cannot use it (it would be NULL).
    broken.replace("UPDATE config SET value = 400,", "UPDATE config SET value = :value,")
    assert problems(broken) == [
        broken.at(
            "    sql: UPDATE config SET value = :value,",
            'statement "writer-b-save": "sql" uses :value, which no task of role writer-b '
            "remembers (bound: :now, :now_hhmm)",
        )
    ]


def test_happened_may_use_failed_and_rowcount(broken: Broken) -> None:
    broken.replace("AND :failed = 0", "AND :failed = 0 AND :rowcount > 0 AND :value > 0")
    assert load_exercise(broken.folder).scoring.guards is not None
    broken.replace("AND :value > 0", "AND :verison > 0")
    assert problems(broken) == [
        broken.at(
            "        happened:",
            'race step "stale-write": "happened" uses :verison, which no task of role writer-a '
            "remembers (bound: :failed, :now, :now_hhmm, :rowcount, :value, :version)",
        )
    ]


def test_parameters_in_sql_that_gets_none(broken: Broken) -> None:
    broken.replace("AND value = 150", "AND value = :value")
    assert problems(broken) == [
        broken.at(
            "    sql: SELECT 1 FROM config WHERE key = 'max_connections' AND value = :value",
            'invariant "lost-update": "sql" uses :value, but it runs without parameters',
        )
    ]


def test_world_sql_error_has_its_own_line(broken: Broken) -> None:
    broken.replace("INSERT INTO automation VALUES", "INSERT INTO automaton VALUES", file="world.sql")
    assert problems(broken) == [
        broken.at("INSERT INTO automaton", "no such table: automaton", file="world.sql")
    ]


def test_yaml_syntax_error(broken: Broken) -> None:
    broken.replace("  zone: PDT\n", "  zone: PDT: Pacific\n")
    assert problems(broken) == [
        broken.at("  zone: PDT: Pacific", "YAML syntax error: mapping values are not allowed here")
    ]


def test_yaml_syntax_error_unclosed_flow(broken: Broken) -> None:
    broken.replace("default_roles: [operator]", "default_roles: [operator")
    (problem,) = problems(broken)
    assert problem.startswith("minimal/exercise.yaml:")
    assert "YAML syntax error" in problem


def test_missing_world_file(broken: Broken) -> None:
    (broken.folder / "world.sql").unlink()
    assert problems(broken) == [broken.at("world: world.sql", 'world file "world.sql" not found in minimal')]


def test_missing_briefing_file(broken: Broken) -> None:
    broken.replace("briefing: briefing.md", "briefing: briefing.txt")
    assert problems(broken) == [
        broken.at("briefing: briefing.txt", 'briefing file "briefing.txt" not found in minimal')
    ]


def test_files_must_stay_inside_the_folder(broken: Broken) -> None:
    broken.replace("world: world.sql", "world: ../world.sql")
    assert problems(broken) == [
        broken.at(
            "world: ../world.sql",
            '"world" must name a file inside the exercise folder, not "../world.sql"',
        )
    ]


def test_bad_enum(broken: Broken) -> None:
    broken.replace("    on_zero_rows: retry", "    on_zero_rows: retyr")
    assert broken.at(
        "    on_zero_rows: retyr",
        'task "writer-a-save": "on_zero_rows" must be one of ignore, retry, stop, not the text "retyr"',
    ) in problems(broken)


def test_bad_enum_alone(broken: Broken) -> None:
    broken.replace("    on_error: stop", "    on_error: halt")
    assert problems(broken) == [
        broken.at(
            "    on_error: halt",
            'task "writer-b-save": "on_error" must be one of ignore, retry, stop, not the text "halt"',
        )
    ]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "level: beginner",
            "level: expert",
            '"level" must be one of beginner, intermediate, advanced, not the text "expert"',
        ),
        (
            "    kind: alarm",
            "    kind: siren",
            'inject "pager": "kind" must be one of alarm, message, status, reveal, not the text "siren"',
        ),
        (
            "    source: exercise-assumption",
            "    source: rumour",
            'inject "pager": source "rumour" is not one the exercise declares '
            "(debrief.sources: exercise-assumption)",
        ),
    ],
)
def test_other_enums(broken: Broken, old: str, new: str, message: str) -> None:
    broken.replace(old, new)
    expected = message if message.startswith(("inject", "task")) else f"the exercise: {message}"
    assert problems(broken) == [broken.at(new, expected)]


def test_retry_policy_needs_a_retry(broken: Broken) -> None:
    broken.replace("    on_error: stop", "    on_error: retry")
    assert problems(broken) == [
        broken.at(
            "  - id: writer-b-save\n    role: writer-b\n    at",
            'task "writer-b-save": a "retry" policy needs "retry: {every: ...}"',
        )
    ]


def test_scoring_totals_must_add_up(broken: Broken) -> None:
    broken.replace("  tasks: 15", "  tasks: 20")
    broken.replace("        points: 15\n", "        points: 10\n")
    assert problems(broken) == [
        broken.at("  tasks: 20", 'scoring: "tasks" is 20 but the tasks\' points add up to 15'),
        broken.at(
            "    points: 30\n    event_minutes",
            'scoring.recovery: "points" is 30 but the items\' points add up to 25',
        ),
    ]


def test_detection_window_must_make_sense(broken: Broken) -> None:
    broken.replace('    zero_after: "1h15m"', '    zero_after: "5m"')
    assert problems(broken) == [
        broken.at(
            '    zero_after: "5m"',
            'scoring.detection: "zero_after" must be longer than "full_within"',
        )
    ]


def test_empty_file(broken: Broken) -> None:
    broken.yaml.write_text("# nothing yet\n", encoding="utf-8")
    assert problems(broken) == ["minimal/exercise.yaml:1: the file is empty"]


def test_top_level_must_be_a_mapping(broken: Broken) -> None:
    broken.yaml.write_text("- id: minimal\n", encoding="utf-8")
    assert problems(broken) == ["minimal/exercise.yaml:1: the exercise must be a mapping of keys, not a list"]


def test_missing_folder(broken: Broken) -> None:
    with pytest.raises(ExerciseError) as info:
        load_exercise(broken.root / "nowhere")
    assert info.value.problems == [f"{broken.root / 'nowhere'}: no such exercise folder or file"]


def test_folder_without_exercise_yaml(broken: Broken) -> None:
    broken.yaml.unlink()
    with pytest.raises(ExerciseError) as info:
        load_exercise(broken.folder.relative_to(broken.root))
    assert info.value.problems == [
        "minimal/exercise.yaml: not found (an exercise folder holds exercise.yaml)"
    ]


def test_every_problem_is_reported_at_once(broken: Broken) -> None:
    broken.replace("  zone: PDT\n", "  zone: PDT\n  colour: red\n")
    broken.replace('    role: writer-b\n    at: "23:50"', '    role: writer-c\n    at: "23:50"')
    broken.replace('    at: "00:20"', '    at: "02:00"')
    broken.replace("    on_error: stop", "    on_error: halt")
    broken.replace("  - id: disk-full", "  - id: lost-update")
    broken.replace("AND value = 150", "AND valu = 150")
    broken.replace("briefing: briefing.md", "briefing: missing.md")
    found = problems(broken)
    assert len(found) == 7, "\n".join(found)
    expected_lines = sorted(
        broken.line_of(snippet)
        for snippet in (
            "  colour: red",
            "    role: writer-c",
            '    at: "02:00"',
            "    on_error: halt",
            "  - id: lost-update\n    text: The database",
            "AND valu = 150",
            "briefing: missing.md",
        )
    )
    assert sorted(int(p.split(":")[1]) for p in found) == expected_lines
    assert all(p.startswith("minimal/exercise.yaml:") for p in found)


def test_a_reveal_with_an_unknown_phase_or_a_bad_event_time_is_reported(tmp_path: Path) -> None:
    source = Path(__file__).resolve().parents[2] / "exercises" / "dynamodb-dns-race"
    folder = tmp_path / "dynamodb-dns-race"
    folder.mkdir()
    for name in ("world.sql", "briefing.md"):
        (folder / name).write_text((source / name).read_text())
    text = (source / "exercise.yaml").read_text()
    text = text.replace("phase: detection", "phase: lunch", 1).replace(
        'event_at: "05:38"', 'event_at: "25:38"', 1)
    (folder / "exercise.yaml").write_text(text)
    with pytest.raises(ExerciseError) as caught:
        load_exercise(folder)
    lines = text.splitlines()
    phase_line = next(n for n, t in enumerate(lines, 1) if "phase: lunch" in t)
    event_line = next(n for n, t in enumerate(lines, 1) if 'event_at: "25:38"' in t)
    problems = "\n".join(caught.value.problems)
    assert f"exercise.yaml:{phase_line}:" in problems and "lunch" in problems
    assert f"exercise.yaml:{event_line}:" in problems and "25:38" in problems


PANEL = """
panel:
  - id: values
    label: Values now
    sql: SELECT key, value, version FROM config ORDER BY key
    show: {show}
    count: {count}
"""


def test_a_panel_count_that_does_not_prepare(broken: Broken) -> None:
    broken.replace("debrief:\n", PANEL.format(
        show="answers", count="SELECT count(*), count(*) FILTER (WHERE valu IS NULL) FROM config")
        + "\ndebrief:\n")
    assert problems(broken) == [
        broken.at("    count: SELECT", 'panel item "values": "count" does not prepare against '
                  "world.sql: no such column: valu")
    ]


def test_a_panel_count_is_for_answers_items(broken: Broken) -> None:
    broken.replace("debrief:\n", PANEL.format(show="rows", count="SELECT count(*) FROM config")
                   + "\ndebrief:\n")
    assert problems(broken) == [
        broken.at("    count: SELECT", 'panel item "values": "count" is for "show: answers" '
                  'items (a count of the names and of the empty ones), not "rows"')
    ]


def test_a_panel_count_that_prepares_loads(broken: Broken) -> None:
    count = "SELECT count(*), count(*) FILTER (WHERE value IS NULL) FROM config"
    broken.replace("debrief:\n", PANEL.format(show="answers", count=count) + "\ndebrief:\n")
    exercise = load_exercise(broken.folder.relative_to(broken.root))
    assert [(i.id, i.count) for i in exercise.panel] == [("values", count)]


# -- injects that follow the world (on_fault) ------------------------------------------------


def test_an_inject_with_both_a_time_and_a_fault_is_one_error(broken: Broken) -> None:
    broken.replace('    at: "00:12"\n', '    at: "00:12"\n    on_fault: lost-update\n')
    assert problems(broken) == [
        broken.at("    on_fault: lost-update", 'inject "pager": give "at" (a time) or "on_fault" '
                  "(an invariant whose fault brings it), not both")
    ]


def test_an_inject_on_an_unknown_invariant_names_the_invariants(broken: Broken) -> None:
    broken.replace('    at: "00:12"\n', '    on_fault: lost-updat\n    after: "2m"\n')
    assert problems(broken) == [
        broken.at("    on_fault: lost-updat", 'inject "pager": invariant "lost-updat" is not '
                  "defined (invariants: lost-update)")
    ]


def test_an_inject_with_neither_a_time_nor_a_fault(broken: Broken) -> None:
    broken.replace('    at: "00:12"\n', "")
    assert problems(broken) == [
        broken.at("  - id: pager", 'inject "pager" needs "at" (a time) or "on_fault" (an '
                  "invariant whose fault brings it)")
    ]


def test_after_belongs_to_an_inject_that_follows_a_fault(broken: Broken) -> None:
    broken.replace('    at: "00:12"\n', '    at: "00:12"\n    after: "2m"\n')
    assert problems(broken) == [
        broken.at('    after: "2m"', 'inject "pager": "after" is the delay once the fault of '
                  '"on_fault" begins; a timed inject has no "after"')
    ]


def test_after_is_a_duration(broken: Broken) -> None:
    broken.replace('    at: "00:12"\n', '    on_fault: lost-update\n    after: soon\n')
    assert problems(broken) == [
        broken.at("    after: soon", 'inject "pager": "after" must be a duration like "10m", '
                  '"2h", "1h30m" or a number of minutes, not the text "soon"')
    ]


def test_within_needs_a_fault_and_an_after(broken: Broken) -> None:
    broken.replace('    at: "00:12"\n', '    on_fault: lost-update\n    within: "10m"\n')
    assert problems(broken) == [
        broken.at('    within: "10m"', 'inject "pager": "within" is the window in which the '
                  'fault of "on_fault" must have held for "after"; it needs both')
    ]


def test_within_is_no_shorter_than_after(broken: Broken) -> None:
    broken.replace('    at: "00:12"\n',
                   '    on_fault: lost-update\n    after: "3h"\n    within: "2h30m"\n')
    assert problems(broken) == [
        broken.at('    within: "2h30m"', 'inject "pager": "within" 2h30m is shorter than '
                  '"after" 3h: the fault could never hold that long in it')
    ]


def test_within_is_a_duration(broken: Broken) -> None:
    broken.replace('    at: "00:12"\n',
                   '    on_fault: lost-update\n    after: "2m"\n    within: later\n')
    assert problems(broken) == [
        broken.at("    within: later", 'inject "pager": "within" must be a duration like "10m", '
                  '"2h", "1h30m" or a number of minutes, not the text "later"')
    ]


def test_a_reveal_is_history_and_keeps_its_time(broken: Broken) -> None:
    broken.replace('    at: "00:12"\n    kind: alarm\n', "    on_fault: lost-update\n    kind: reveal\n")
    assert problems(broken) == [
        broken.at("    on_fault: lost-update", "inject \"pager\": a reveal tells that night's "
                  'history, whatever the team does: it arrives at a time ("at"), not "on_fault"')
    ]


def test_a_practice_nights_change_names_what_is_wrong_at_its_line(broken: Broken) -> None:
    path = broken.folder / "exercise.yaml"
    path.write_text(path.read_text(encoding="utf-8") + """
replay:
  practice:
    - id: odd
      title: an odd night
      changes:
        - task: writer-a-read
          at: "23:41"
          bind_sql: {value: 7}
""", encoding="utf-8")
    line = broken.line_of("bind_sql: {value: 7}")
    assert problems(broken) == [
        f'minimal/exercise.yaml:{line}: practice night "odd": changes item 1: bind_sql "value" '
        "must be a query, not the number 7"]


def test_a_swap_group_of_one_name_is_refused_at_its_line(broken: Broken) -> None:
    path = broken.folder / "exercise.yaml"
    path.write_text(path.read_text(encoding="utf-8") + """
replay:
  shifted:
    start: ["12:00", "20:30"]
    swap:
      - [writer-a, writer-b]
      - [writer-a]
""", encoding="utf-8")
    line = broken.line_of("- [writer-a]")
    assert problems(broken) == [
        f'minimal/exercise.yaml:{line}: replay: shifted: each "swap" group must list two or '
        "more different names (no quotes in them), not a list"]


def test_the_own_words_finding_id_is_reserved(broken: Broken) -> None:
    broken.replace("  - id: disk-full", "  - id: own-words")
    assert problems(broken) == [broken.at(
        "  - id: own-words",
        'finding "own-words": the id is reserved for a finding in a player\'s own words; give '
        "this one another id")]
