"""`lookbench audit`: can distractors be told from galleries by where they came from rather than what they show?"""
