"""Configs as setups (#80): one folder a setup, each with its README naming its command and its results."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_setup_folder_has_its_readme_with_a_command_and_its_files():
    folders = sorted(p for p in (ROOT / "configs").iterdir() if p.is_dir())
    assert len(folders) >= 10
    for folder in folders:
        readme = folder / "README.md"
        assert readme.is_file(), f"{folder.name}: no README.md"
        text = readme.read_text(encoding="utf-8")
        assert "```bash" in text and "Results:" in text, f"{folder.name}/README.md: its command and results"
        for config in folder.glob("*.yaml"):
            assert f"`{config.name}`" in text, f"{folder.name}/README.md does not list {config.name}"


def test_no_config_lies_loose_at_the_top_of_configs():
    assert sorted(p.name for p in (ROOT / "configs").glob("*.yaml")) == ["setups.yaml"]
