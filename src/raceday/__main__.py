from raceday.parent_watch import die_with_parent

die_with_parent()  # a browser's process under `raceday serve` ends with the server

from raceday.cli import main  # noqa: E402

raise SystemExit(main())
