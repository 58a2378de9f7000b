"""Typed, validated YAML configs for the trainers."""

from relkt.config.config_io import (
    apply_overrides,
    config_yaml,
    from_dict,
    load_config,
    merge_config,
    read_config_file,
    run_config,
    save_config,
    to_dict,
)
from relkt.config.sections import (
    DataSection,
    DistributeSection,
    EncoderSection,
    EvalSection,
    PoolSection,
    ScheduleSection,
    VocabGrowthSection,
)
from relkt.config.student_config import (
    DistillSection,
    StudentConfig,
    StudentDataSection,
    StudentEncoderSection,
    VocabExtensionSection,
)
from relkt.config.teacher_config import MiningSection, TeacherConfig, TeacherVocabSection, TripletSection

StageConfig = TeacherConfig | StudentConfig  # a trainer's whole config, either stage

__all__ = [
    "StageConfig",
    "DataSection",
    "DistillSection",
    "DistributeSection",
    "EncoderSection",
    "StudentConfig",
    "StudentDataSection",
    "StudentEncoderSection",
    "EvalSection",
    "MiningSection",
    "PoolSection",
    "ScheduleSection",
    "TeacherConfig",
    "TeacherVocabSection",
    "TripletSection",
    "VocabExtensionSection",
    "VocabGrowthSection",
    "apply_overrides",
    "config_yaml",
    "from_dict",
    "load_config",
    "merge_config",
    "read_config_file",
    "run_config",
    "save_config",
    "to_dict",
]
