"""placeholder"""
class FriendlyCoreKMeans:  # replaced below
    pass
