from raceday.cli import main

raise SystemExit(main())
