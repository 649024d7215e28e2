from infoppo_cli.cli import main

main()
