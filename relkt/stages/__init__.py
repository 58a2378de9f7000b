"""The two stages of CL-ReLKT, each read top to bottom: the teacher (`teacher_trainer.TeacherTrainer`) and the
student (`student_trainer.StudentTrainer`). Their CLIs are `relkt.train_teacher` and `relkt.train_student`."""
