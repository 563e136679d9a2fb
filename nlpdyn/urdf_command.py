"""The command line's options for a URDF model (``python -m nlpdyn model.urdf ...``): each
``--clearance``, ``--limits``, ``--damping``, ``--friction`` and ``--bushing`` text as
:func:`~nlpdyn.urdf.from_urdf`'s keyword, every problem of them listed at once.

Each takes ``HEAD[,key=value,...]``; a number list is written ``a:b:c``:

- ``--clearance JOINT=C,radius=R,length=L[,axial_clearance=A,friction=MU]``;
- ``--limits LAW,stiffness=K[,restitution=E,...]`` for every joint with limits, or
  ``--limits JOINT=LAW,...`` (LAW: hertz, lankarani-nikravesh, kelvin-voigt);
- ``--damping`` (the file's, on every joint that has one), ``--damping JOINT`` (the file's),
  ``--damping JOINT=C``;
- ``--friction coulomb`` (the file's, on every joint that has one), ``--friction
  JOINT=coulomb``, ``--friction JOINT=lugre,sigma0=S[,sigma1=..,friction=F,...]``;
- ``--bushing JOINT,stiffness=K,rotational_stiffness=KR[,damping=C,rotational_damping=CR]``.
"""
from __future__ import annotations

LAWS = {"hertz": "Hertz", "lankarani-nikravesh": "LankaraniNikravesh",
        "kelvin-voigt": "ModifiedKelvinVoigt"}
OPTIONS = ("clearance", "limits", "damping", "friction", "bushing")


def _number(text):
    """A float, or a tuple of them for ``a:b:c``."""
    parts = [float(x) for x in text.split(":")]
    return parts[0] if len(parts) == 1 else tuple(parts)


def parse_spec(text: str) -> tuple[str | None, str, dict]:
    """``HEAD[,key=value,...]`` as (joint or None, head value, {key: number}).

    Parameters
    ----------
    text : str
        ``JOINT=VALUE,...`` (joint given) or ``VALUE,...``.

    Returns
    -------
    tuple
        Raises ValueError naming what is not ``key=number``.

    Examples
    --------
    >>> parse_spec("elbow=1e-4,radius=0.01,length=0.02")
    ('elbow', '1e-4', {'radius': 0.01, 'length': 0.02})
    >>> parse_spec("hertz,stiffness=1e7")
    (None, 'hertz', {'stiffness': 10000000.0})
    """
    head, *items = text.split(",")
    joint, sep, value = head.partition("=")
    joint, value = (joint.strip(), value.strip()) if sep else (None, head.strip())
    data = {}
    for item in items:
        key, sep, number = item.partition("=")
        try:
            if not (sep and key.strip()):
                raise ValueError
            data[key.strip()] = _number(number)
        except ValueError:
            raise ValueError(f"{item!r} is not key=number (a:b:c for several)") from None
    return joint, value, data


def _law(name, data, nd):
    cls = getattr(nd, LAWS.get(name.lower(), ""), None)
    if cls is None:
        raise ValueError(f"unknown contact law {name!r} (choose from {', '.join(LAWS)})")
    try:
        return cls(**data)
    except TypeError as err:
        raise ValueError(f"{name}: {err}") from None


def urdf_keywords(args, nd) -> tuple[dict, list[str]]:
    """from_urdf's keywords from the parsed command line ``args`` (lists of texts), and
    every problem, each naming its argument.

    Parameters
    ----------
    args : argparse.Namespace
        With ``clearance``, ``limits``, ``damping``, ``friction`` and ``bushing`` (lists of
        texts or None; ``damping`` holds "" for a bare ``--damping``).
    nd : module
        nlpdyn (its contact laws).

    Returns
    -------
    (dict, list of str)

    Examples
    --------
    >>> import argparse
    >>> import nlpdyn as nd
    >>> args = argparse.Namespace(clearance=["elbow=1e-4,radius=0.01,length=0.02"],
    ...                           limits=["hertz,stiffness=1e7"], damping=[""],
    ...                           friction=["wrist=lugre,sigma0=1e4"], bushing=None)
    >>> keywords, problems = urdf_keywords(args, nd)
    >>> keywords["clearance"], keywords["damping"], keywords["friction"], problems
    ({'elbow': {'clearance': 0.0001, 'radius': 0.01, 'length': 0.02}}, True, \
{'wrist': {'sigma0': 10000.0}}, [])
    """
    keywords, problems = {}, []
    for option in OPTIONS:
        forms = set()
        for text in getattr(args, option) or ():
            flag = f"argument --{option}"
            try:
                joint, value, data = parse_spec(text)
                forms.add(joint is not None or option in ("clearance", "bushing")
                          or (option == "damping" and bool(value)))
                if len(forms) > 1:
                    continue        # reported below
                if option == "clearance":
                    if joint is None:
                        raise ValueError("give JOINT=C,radius=R,length=L")
                    keywords.setdefault(option, {})[joint] = {"clearance": _number(value),
                                                              **data}
                elif option == "limits":
                    law = _law(value, data, nd)
                    if joint is None:
                        keywords[option] = law
                    else:
                        keywords.setdefault(option, {})[joint] = law
                elif option == "damping":
                    if not value and joint is None:
                        keywords[option] = True
                    else:
                        keywords.setdefault(option, {})[joint or value] = \
                            _number(value) if joint else None
                elif option == "friction":
                    if value.lower() not in ("coulomb", "lugre"):
                        raise ValueError(f"{value!r}: choose coulomb or lugre")
                    if joint is None and value.lower() == "coulomb" and not data:
                        keywords[option] = "coulomb"
                    elif joint is None:
                        raise ValueError("LuGre's law (or Coulomb's with parameters) takes "
                                         "JOINT=lugre,sigma0=S,...")
                    else:
                        if value.lower() == "lugre" and "sigma0" not in data:
                            raise ValueError("lugre needs sigma0=S")
                        keywords.setdefault(option, {})[joint] = data or "coulomb"
                else:
                    if joint is not None:
                        raise ValueError("give JOINT,stiffness=K,rotational_stiffness=KR")
                    keywords.setdefault(option, {})[value] = data
            except ValueError as err:
                problems.append(f"{flag}: {text!r}: {err}")
        if len(forms) > 1:
            problems.append(f"argument --{option}: give it for every joint or joint by joint, "
                            "not both")
    return keywords, problems
