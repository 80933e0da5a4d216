#!/usr/bin/python3
"""Reads one VTK XML file with VTK's own reader and prints a JSON summary on stdout.

Used by tests/unit/test_vtk.cpp to check dem's writers against the reference implementation.

    /usr/bin/python3 tests/tools/read_vtk.py FILE [--max N]

.vtu / .vtp: {"points": [[x, y, z], ...], "cells": n, "cell_types": [...], "cell_points":
[[ids], ...], "point_data": {name: {"type", "components", "tuples", "values"}}, "cell_data":
{...}, "field_data": {...}, "messages": "<anything VTK reported>"}. Values are exact (JSON
floats are written with Python's round-trip repr); --max limits how many tuples are listed.

.pvd: parsed with xml.etree: {"type": "Collection", "datasets": [{"timestep", "file"}, ...]}.

Exit status: 0 on success, 2 on usage errors, 3 when the vtk module cannot be imported
(Debian: python3-vtk9, importable from /usr/bin/python3 only), 4 when VTK reports an error.
"""
import json
import sys


def read_pvd(path):
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()
    datasets = [
        {"timestep": float(d.get("timestep")), "file": d.get("file")}
        for d in root.iter("DataSet")
    ]
    return {"type": root.get("type"), "datasets": datasets}


def array_summary(arr, limit):
    n = arr.GetNumberOfTuples()
    count = n if limit is None else min(n, limit)
    out = {
        "type": arr.GetDataTypeAsString(),
        "components": arr.GetNumberOfComponents(),
        "tuples": n,
    }
    if arr.IsA("vtkStringArray"):
        out["values"] = [arr.GetValue(i) for i in range(count)]
    else:
        out["values"] = [list(arr.GetTuple(i)) for i in range(count)]
    return out


def data_summary(data, limit):
    out = {}
    for k in range(data.GetNumberOfArrays()):
        arr = data.GetAbstractArray(k)
        out[arr.GetName()] = array_summary(arr, limit)
    return out


def read_xml(path, limit):
    try:
        import vtk
    except ImportError as e:  # the caller skips its checks on status 3
        print(json.dumps({"error": f"cannot import vtk: {e}"}))
        return 3

    log = vtk.vtkStringOutputWindow()
    vtk.vtkOutputWindow.SetInstance(log)
    if path.endswith(".vtu"):
        reader = vtk.vtkXMLUnstructuredGridReader()
    elif path.endswith(".vtp"):
        reader = vtk.vtkXMLPolyDataReader()
    else:
        print(json.dumps({"error": f"unknown extension: {path}"}))
        return 2
    reader.SetFileName(path)
    reader.Update()
    out = reader.GetOutput()
    messages = log.GetOutput()

    npts = out.GetNumberOfPoints()
    pcount = npts if limit is None else min(npts, limit)
    ncells = out.GetNumberOfCells()
    ccount = ncells if limit is None else min(ncells, limit)
    cell_points = []
    for c in range(ccount):
        ids = out.GetCell(c).GetPointIds()
        cell_points.append([ids.GetId(k) for k in range(ids.GetNumberOfIds())])
    result = {
        "class": out.GetClassName(),
        "number_of_points": npts,
        "points": [list(out.GetPoint(p)) for p in range(pcount)],
        "cells": ncells,
        "cell_types": [out.GetCellType(c) for c in range(ccount)],
        "cell_points": cell_points,
        "point_data": data_summary(out.GetPointData(), limit),
        "cell_data": data_summary(out.GetCellData(), limit),
        "field_data": data_summary(out.GetFieldData(), limit),
        "messages": messages,
    }
    print(json.dumps(result))
    return 4 if ("ERROR" in messages or reader.GetErrorCode() != 0) else 0


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = argv[1]
    limit = None
    if len(argv) >= 4 and argv[2] == "--max":
        limit = int(argv[3])
    if path.endswith(".pvd"):
        print(json.dumps(read_pvd(path)))
        return 0
    return read_xml(path, limit)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
