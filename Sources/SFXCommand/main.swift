import SFX
print("sfx")
